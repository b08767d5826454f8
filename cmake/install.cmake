# Install rules and the package files consumers use: `cmake --install build --prefix P` puts the public headers,
# librsz_core / librsz_ops / librsz_io / librsz_pipeline (static), the OpenCV codec module, the rsz binary,
# rszConfig.cmake (+ version file, exported targets rsz::core, rsz::ops, rsz::io and rsz::pipeline), rsz.pc,
# rsz-ops.pc and rsz-pipeline.pc under P. Consumers get the libraries' usage requirements only: no warning flags,
# no tests.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY core/include/rsz io/include/rsz pipeline/include/rsz DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h"
        PATTERN "gpu_jpeg.h" EXCLUDE)  # the GPU jobs stage is internal: its library is installed, not its header
# rsz_gpu_jpeg (nvJPEG builds): linked into rsz_pipeline for --decode gpu, so a static rsz::pipeline needs it too.
set(rsz_installed rsz_core rsz_ops rsz_io rsz_pipeline)
if(TARGET rsz_gpu_jpeg)
  list(APPEND rsz_installed rsz_gpu_jpeg)
endif()
install(TARGETS ${rsz_installed} EXPORT rszTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The installed binary finds shared rsz libraries relative to itself (a relocatable prefix).
set_target_properties(rsz PROPERTIES INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS rsz RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(RSZ_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rsz)
install(EXPORT rszTargets NAMESPACE rsz:: DESTINATION ${RSZ_CMAKE_DIR} FILE rszTargets.cmake)
if(BUILD_SHARED_LIBS)
  set(RSZ_SHARED ON)
else()
  set(RSZ_SHARED OFF)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/rszConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/rszConfig.cmake
                              INSTALL_DESTINATION ${RSZ_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rszConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rszConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/rszConfigVersion.cmake
        DESTINATION ${RSZ_CMAKE_DIR})

# pkg-config: static builds need the private dependencies (pkg-config --static). The prefix is found relative to the
# .pc file, so `cmake --install --prefix P` gives a correct file for any P.
# rsz-ops.pc: core's and ops' (threads, dlopen, the CUDA runtime); rsz.pc: those and io's.
set(RSZ_PC_OPS_PRIVATE "-lpthread -l${CMAKE_DL_LIBS}")
if(RSZ_CUDA_BUILD)  # the static CUDA runtime, as CUDA::cudart_static links it
  string(PREPEND RSZ_PC_OPS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt ")
endif()
set(RSZ_PC_LIBS_PRIVATE "${RSZ_PC_OPS_PRIVATE}")
set(RSZ_PC_PIPELINE_PRIVATE "")
if(TARGET rsz_gpu_jpeg)  # --decode gpu: the GPU JPEG stage and nvJPEG
  set(RSZ_PC_PIPELINE_PRIVATE "-lrsz_gpu_jpeg -L${CUDAToolkit_LIBRARY_DIR} -lnvjpeg")
endif()
if(RSZ_LIBDEFLATE_INCLUDE AND RSZ_LIBDEFLATE_LIBRARY)  # io's PNG deflate (io/CMakeLists.txt)
  string(APPEND RSZ_PC_LIBS_PRIVATE " -ldeflate")
endif()
file(RELATIVE_PATH RSZ_PC_UP "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" RSZ_PC_UP "${RSZ_PC_UP}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/rsz.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rsz.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/rsz-pipeline.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rsz-pipeline.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/rsz-ops.pc.in ${CMAKE_CURRENT_BINARY_DIR}/rsz-ops.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rsz.pc ${CMAKE_CURRENT_BINARY_DIR}/rsz-pipeline.pc
              ${CMAKE_CURRENT_BINARY_DIR}/rsz-ops.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
