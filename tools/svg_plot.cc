// See svg_plot.h. Layout: a 720x440 canvas, the plot area inside fixed
// margins, both axes log10 of the value mapped onto whole decades around
// the data (ns/packet spans decades between tiers).
#include "tools/svg_plot.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rulejit::tools {
namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 80, kRight = 160, kTop = 40, kBottom = 60;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// A log scale over whole decades holding [lo, hi] (values > 0).
struct LogScale {
  double lo, hi;  // decades
  static LogScale Around(double min, double max) {
    if (!(max > 0)) min = 1, max = 10;
    LogScale s{std::floor(std::log10(min)), std::ceil(std::log10(max))};
    if (s.hi <= s.lo) s.hi = s.lo + 1;
    return s;
  }
  double Fraction(double v) const {
    return (std::log10(std::max(v, std::pow(10, lo))) - lo) / (hi - lo);
  }
};

struct Axes {
  LogScale x, y;
  double X(double v) const { return kLeft + x.Fraction(v) * (kWidth - kLeft - kRight); }
  double Y(double v) const { return kHeight - kBottom - y.Fraction(v) * (kHeight - kTop - kBottom); }
};

Axes MakeAxes(const SvgPlot& plot) {
  double x_min = 1e300, x_max = 0, y_min = 1e300, y_max = 0;
  for (const SvgSeries& s : plot.series) {
    for (auto [x, y] : s.points) {
      x_min = std::min(x_min, x), x_max = std::max(x_max, x);
      if (y > 0) y_min = std::min(y_min, y), y_max = std::max(y_max, y);
    }
  }
  return {LogScale::Around(x_min, x_max), LogScale::Around(y_min, y_max)};
}

std::string AxesText(const SvgPlot& plot, const Axes& a) {
  std::string out;
  const double x0 = kLeft, x1 = kWidth - kRight, y0 = kHeight - kBottom, y1 = kTop;
  absl::StrAppendFormat(&out, "<g class=\"axes\" stroke=\"#000\">\n"
                              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
                              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n</g>\n",
                        x0, y0, x1, y0, x0, y0, x0, y1);
  for (double d = a.x.lo; d <= a.x.hi; ++d) {
    double x = a.X(std::pow(10, d));
    absl::StrAppendFormat(&out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ccc\"/>\n"
                                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n",
                          x, y0, x, y1, x, y0 + 18, std::pow(10, d));
  }
  for (double d = a.y.lo; d <= a.y.hi; ++d) {
    double v = std::pow(10, d), y = a.Y(v);
    absl::StrAppendFormat(&out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ccc\"/>\n"
                                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.10g</text>\n",
                          x0, y, x1, y, x0 - 6, y + 4, v);
  }
  absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                        (x0 + x1) / 2, kHeight - 15, Escape(plot.x_label));
  absl::StrAppendFormat(&out, "<text transform=\"translate(20,%.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
                        (y0 + y1) / 2, Escape(plot.y_label));
  absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">%s</text>\n",
                        kWidth / 2, Escape(plot.title));
  return out;
}

std::string SeriesText(const SvgSeries& s, size_t index, const Axes& a) {
  const char* color = kColors[index % (sizeof(kColors) / sizeof(kColors[0]))];
  std::string points, markers;
  for (auto [x, y] : s.points) {
    absl::StrAppendFormat(&points, "%s%.1f,%.1f", points.empty() ? "" : " ", a.X(x), a.Y(y));
    absl::StrAppendFormat(&markers, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%s: %g rules, %.1f</title></circle>\n",
                          a.X(x), a.Y(y), Escape(s.name), x, y);
  }
  const double ly = kTop + 20 + 20 * index, lx = kWidth - kRight + 20;
  return absl::StrFormat(
      "<g class=\"series\" data-name=\"%s\" stroke=\"%s\" fill=\"%s\">\n"
      "<polyline fill=\"none\" stroke-width=\"2\" points=\"%s\"/>\n%s"
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"2\"/>\n"
      "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"#000\">%s</text>\n</g>\n",
      Escape(s.name), color, color, points, markers, lx, ly, lx + 24, ly, lx + 30, ly + 4,
      Escape(s.name));
}

}  // namespace

std::string RenderSvg(const SvgPlot& plot) {
  const Axes a = MakeAxes(plot);
  std::string out = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppend(&out, AxesText(plot, a));
  for (size_t i = 0; i < plot.series.size(); ++i) absl::StrAppend(&out, SeriesText(plot.series[i], i, a));
  return out + "</svg>\n";
}

}  // namespace rulejit::tools
