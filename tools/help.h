// The usage text of the `rulejit` command, in the three forms printed from
// the command table (commands.h): the overview (`rulejit --help`), one
// command's page (`rulejit help COMMAND`), the man page (`rulejit help
// --man`, troff, written to rulejit.1 at build time) and the bash completion
// script (`rulejit help --bash-completion`, also generated at build time).
#ifndef RULEJIT_TOOLS_HELP_H_
#define RULEJIT_TOOLS_HELP_H_

#include <ostream>

#include "tools/commands.h"

namespace rulejit::tools {

void PrintUsage(std::ostream& os);
void PrintCommandHelp(const Command& command, std::ostream& os);
void PrintManPage(std::ostream& os);
void PrintBashCompletion(std::ostream& os);

}  // namespace rulejit::tools

#endif  // RULEJIT_TOOLS_HELP_H_
