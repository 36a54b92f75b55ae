# install.cmake - `cmake --install`: the topsim binary, libtopsim.a, the
# public headers (ts_version.h generated), a pkg-config file, a CMake
# package exporting topsim::topsim, and topsim(1) generated from --help by
# help2man (skipped with a notice when help2man is missing).
include(CMakePackageConfigHelpers)

set(TOPSIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/topsim)

install(TARGETS topsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS topsim_lib EXPORT topsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/topsim
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_BINARY_DIR}/include/topsim/ts_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/topsim)

# The .pc file finds its prefix from its own place (${pcfiledir}), so
# `cmake --install --prefix DIR` works without reconfiguring.
file(RELATIVE_PATH TOPSIM_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${CMAKE_SOURCE_DIR}/cmake/topsim.pc.in
               ${CMAKE_BINARY_DIR}/topsim.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/topsim.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT topsimTargets NAMESPACE topsim:: DESTINATION ${TOPSIM_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/topsimConfig.cmake.in
    ${CMAKE_BINARY_DIR}/topsimConfig.cmake INSTALL_DESTINATION ${TOPSIM_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/topsimConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/topsimConfig.cmake
              ${CMAKE_BINARY_DIR}/topsimConfigVersion.cmake
        DESTINATION ${TOPSIM_CMAKE_DIR})

find_program(HELP2MAN help2man)
if(HELP2MAN)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/topsim.1
      COMMAND ${CMAKE_COMMAND} -DTOPSIM=$<TARGET_FILE:topsim>
              -DHELP2MAN=${HELP2MAN} -DOUT=${CMAKE_BINARY_DIR}/topsim.1
              -P ${CMAKE_SOURCE_DIR}/cmake/manpage.cmake
      DEPENDS topsim ${CMAKE_SOURCE_DIR}/cmake/manpage.cmake
      COMMENT "Generating topsim.1 from --help")
  add_custom_target(topsim_man ALL DEPENDS ${CMAKE_BINARY_DIR}/topsim.1)
  install(FILES ${CMAKE_BINARY_DIR}/topsim.1
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: topsim.1 will not be built")
endif()
