// rulejit_version(): the project version of the top CMakeLists.txt, passed
// to this file alone (RULEJIT_VERSION_STRING) so that a version bump
// recompiles one file. `rulejit --version` prints it too.
#include "rulejit/rulejit_c.h"

extern "C" const char* rulejit_version(void) { return RULEJIT_VERSION_STRING; }
