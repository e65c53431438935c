# `cmake --install`: the static library, the public headers, a CMake package
# (find_package(rulejit) -> rulejit::rulejit) and a pkg-config file.
#
# The public headers are include/rulejit/*.h and nothing else: the C++ API
# (rulejit/rulejit.h) exposes no internal type, so no internal header is
# installed; C programs need only rulejit/rulejit_c.h.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS rulejit EXPORT rulejitTargets
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
configure_file(cmake/rulejit.pc.in ${CMAKE_BINARY_DIR}/rulejit.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/rulejit.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
