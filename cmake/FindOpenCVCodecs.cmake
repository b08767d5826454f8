# Finds just the OpenCV modules rsz uses (core and imgcodecs), as shipped by Debian's libopencv-core-dev and
# libopencv-imgcodecs-dev, without requiring the all-modules OpenCV package that carries OpenCVConfig.cmake.
# Defines the imported target OpenCVCodecs::OpenCVCodecs.
include(FindPackageHandleStandardArgs)

find_path(OpenCVCodecs_INCLUDE_DIR opencv2/imgcodecs.hpp PATH_SUFFIXES opencv4)
find_library(OpenCVCodecs_CORE_LIBRARY opencv_core)
find_library(OpenCVCodecs_IMGCODECS_LIBRARY opencv_imgcodecs)
find_package_handle_standard_args(OpenCVCodecs
  REQUIRED_VARS OpenCVCodecs_INCLUDE_DIR OpenCVCodecs_CORE_LIBRARY OpenCVCodecs_IMGCODECS_LIBRARY)

if(OpenCVCodecs_FOUND AND NOT TARGET OpenCVCodecs::OpenCVCodecs)
  add_library(OpenCVCodecs::OpenCVCodecs INTERFACE IMPORTED)
  set_target_properties(OpenCVCodecs::OpenCVCodecs PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OpenCVCodecs_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${OpenCVCodecs_IMGCODECS_LIBRARY};${OpenCVCodecs_CORE_LIBRARY}")
endif()
mark_as_advanced(OpenCVCodecs_INCLUDE_DIR OpenCVCodecs_CORE_LIBRARY OpenCVCodecs_IMGCODECS_LIBRARY)
