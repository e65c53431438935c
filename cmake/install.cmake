# `cmake --install`: the command, the static and the shared library, the
# public headers, a CMake package (find_package(rulejit) ->
# rulejit::rulejit, static, and rulejit::rulejit_shared), pkg-config files
# (rulejit: shared, rulejit-static: static), the man page and the bash
# completion (both generated from the command's own usage text); and
# `cpack -G DEB` for a Debian package of all of it.
#
# The public headers are include/rulejit/*.h and nothing else: the C++ API
# (rulejit/rulejit.h) exposes no internal type, so no internal header is
# installed; C programs need only rulejit/rulejit_c.h.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS ${RULEJIT_LIBS} EXPORT rulejitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS rulejit_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

file(GLOB RULEJIT_PUBLIC_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/rulejit/*.h)
install(FILES ${RULEJIT_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rulejit)

set(RULEJIT_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rulejit)
install(EXPORT rulejitTargets NAMESPACE rulejit::
  DESTINATION ${RULEJIT_CMAKEDIR})
configure_package_config_file(cmake/rulejitConfig.cmake.in
  ${CMAKE_BINARY_DIR}/rulejitConfig.cmake
  INSTALL_DESTINATION ${RULEJIT_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/rulejitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/rulejitConfig.cmake
  ${CMAKE_BINARY_DIR}/rulejitConfigVersion.cmake
  DESTINATION ${RULEJIT_CMAKEDIR})

# Relocatable: the prefix is found from the .pc file's own place, so
# `cmake --install build --prefix DIR` works for any DIR.
file(RELATIVE_PATH RULEJIT_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
set(RULEJIT_PC_FILES rulejit-static)
if(RULEJIT_SHARED_LIB)
  list(APPEND RULEJIT_PC_FILES rulejit)
endif()
foreach(pc ${RULEJIT_PC_FILES})
  configure_file(cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# The man page and the bash completion, written by the command from the
# usage text it prints itself (tools/help.cc), so the three never disagree.
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/rulejit.1
  COMMAND rulejit_tool help --man > ${CMAKE_BINARY_DIR}/rulejit.1
  DEPENDS rulejit_tool VERBATIM)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/rulejit.bash-completion
  COMMAND rulejit_tool help --bash-completion > ${CMAKE_BINARY_DIR}/rulejit.bash-completion
  DEPENDS rulejit_tool VERBATIM)
add_custom_target(rulejit_docs ALL DEPENDS ${CMAKE_BINARY_DIR}/rulejit.1
  ${CMAKE_BINARY_DIR}/rulejit.bash-completion)
install(FILES ${CMAKE_BINARY_DIR}/rulejit.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_BINARY_DIR}/rulejit.bash-completion
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME rulejit)

# `cpack -G DEB` (from the build directory): rulejit_VERSION_amd64.deb with
# all of the above under /usr. Its dependencies are read from the binaries
# (dpkg-shlibdeps); building against the C++ API needs Abseil's headers.
set(CPACK_PACKAGE_NAME rulejit)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "rulejit developers <rulejit@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Compiles firewall rulesets (iptables-save, nft) to native code")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libabsl-dev")
# Only what `cmake --install` installs for users (the test and benchmark
# targets install nothing).
include(CPack)
