// A line plot as hand-written SVG text (no plotting library): one polyline
// with point markers per series, log-scaled x and y axes with a tick at
// each power of ten, axis titles and a legend.
//
//   SvgPlot plot{.title = "...", .x_label = "rules", .y_label = "ns/packet"};
//   plot.series.push_back({"jit", {{10, 4.2}, {100, 4.5}}});
//   std::string svg = RenderSvg(plot);
//
// Each series is a `<g class="series" data-name="NAME">` group, so a
// reader (or a test) can find them.
#ifndef RULEJIT_TOOLS_SVG_PLOT_H_
#define RULEJIT_TOOLS_SVG_PLOT_H_

#include <string>
#include <utility>
#include <vector>

namespace rulejit::tools {

struct SvgSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // x > 0, y > 0
};

struct SvgPlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<SvgSeries> series;
};

std::string RenderSvg(const SvgPlot& plot);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_SVG_PLOT_H_
