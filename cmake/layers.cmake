# One CMake target per layer, each with its own include scope, so that the
# layering of ../shared/DESIGN.md is enforced by the build:
#
#   packet ← host ← ir ← frontends, headerspace ← passes, classify, analysis ← lower
#     ← backend_common ← backend_asmjit, backend_llvm ← api ← runtime ← tools
#
# rulejit_layer(NAME DIRS <folders> [HEADERS <files>] DEPS <layers>) makes
# an OBJECT library of every .cc under DIRS and compiles it with one include
# root, ${CMAKE_BINARY_DIR}/layers/NAME, which holds symbolic links to the
# layer's own folders and headers and to those of every layer below it, and
# nothing else. `#include "frontends/frontend.h"` from ir/ then fails with
# "No such file or directory" instead of shipping (tests/cli/layers_test.cc
# tries such includes). HEADERS names single public headers
# (include/rulejit/packet.h) a low layer may use without seeing the API.
# The objects of all layers make both installed libraries (rulejit and
# rulejit_shared), compiled once.

set(RULEJIT_LAYERS "")

# The include-root entry of a source path: include/rulejit/x.h is reached
# as rulejit/x.h, a folder by its own path.
function(rulejit_scope_entry path out)
  string(REGEX REPLACE "^include/" "" entry "${path}")
  set(${out} "${entry}" PARENT_SCOPE)
endfunction()

function(rulejit_layer name)
  cmake_parse_arguments(L "" "" "DIRS;HEADERS;DEPS" ${ARGN})
  set(visible ${L_DIRS} ${L_HEADERS})
  foreach(dep ${L_DEPS})
    get_property(below GLOBAL PROPERTY RULEJIT_LAYER_VISIBLE_${dep})
    list(APPEND visible ${below})
  endforeach()
  list(REMOVE_DUPLICATES visible)
  set_property(GLOBAL PROPERTY RULEJIT_LAYER_VISIBLE_${name} ${visible})

  set(scope ${CMAKE_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${scope})
  foreach(path ${visible})
    # A file or folder inside a linked folder is there already (linking it
    # again would write through the folder's link into the source tree).
    set(inside FALSE)
    foreach(other ${visible})
      string(FIND "${path}" "${other}/" at)
      if(at EQUAL 0)
        set(inside TRUE)
      endif()
    endforeach()
    if(inside)
      continue()
    endif()
    rulejit_scope_entry(${path} entry)
    get_filename_component(parent ${scope}/${entry} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${path} ${scope}/${entry} SYMBOLIC)
  endforeach()

  set(sources "")
  foreach(dir ${L_DIRS})
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cc)
    list(APPEND sources ${found})
  endforeach()
  list(FILTER sources EXCLUDE REGEX ".*_(test|fuzz)\\.cc$")
  add_library(rulejit_${name} OBJECT ${sources})
  # -fPIC: the same objects make the static and the shared library.
  set_target_properties(rulejit_${name} PROPERTIES
    POSITION_INDEPENDENT_CODE ${RULEJIT_SHARED_LIB})
  target_include_directories(rulejit_${name} PRIVATE ${scope})
  target_link_libraries(rulejit_${name} PRIVATE
    absl::status absl::statusor absl::strings absl::str_format
    absl::flat_hash_map absl::inlined_vector absl::span)
  set(RULEJIT_LAYERS ${RULEJIT_LAYERS} ${name} PARENT_SCOPE)
endfunction()
