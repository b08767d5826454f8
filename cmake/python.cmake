# Whether the Python module (python/) can be built: sets RSZ_PYTHON_BUILD. RSZ_PYTHON=AUTO builds it when pybind11
# (Debian: pybind11-dev) and the Python headers (python3-dev) are found, ON requires them, OFF skips it. Sanitizer
# and fuzz builds skip it: an instrumented extension cannot be loaded into a plain interpreter. The interpreter is
# /usr/bin/python3 where it exists (the one Debian's python3-* packages belong to); -DPython3_EXECUTABLE=... picks
# another.
set(RSZ_PYTHON AUTO CACHE STRING "Build the Python module: AUTO, ON or OFF")
set_property(CACHE RSZ_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(RSZ_PYTHON_BUILD OFF)
if(RSZ_PYTHON STREQUAL "OFF" OR RSZ_SANITIZE OR RSZ_FUZZ)
  if(RSZ_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "RSZ_PYTHON=ON cannot be combined with RSZ_SANITIZE or RSZ_FUZZ")
  endif()
  return()
endif()
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module)
set(PYBIND11_FINDPYTHON ON)
if(Python3_FOUND)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
if(Python3_FOUND AND pybind11_FOUND)
  set(RSZ_PYTHON_BUILD ON)
  # The static libraries go into the extension module: position-independent code.
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  # cmake --install puts the package where this interpreter looks under the prefix (Debian: lib/python3.X/
  # dist-packages, which /usr/local/lib/... is for a default prefix).
  execute_process(COMMAND ${Python3_EXECUTABLE} -c
                          "import sys, sysconfig; print('lib/python%d.%d/' % sys.version_info[:2] + ('dist-packages' if 'dist-packages' in sysconfig.get_paths()['platlib'] else 'site-packages'))"
                  OUTPUT_VARIABLE rsz_python_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(RSZ_PYTHON_INSTALL_DIR ${rsz_python_dir} CACHE STRING
      "Where cmake --install puts the rsz Python package, relative to the prefix (or absolute)")
  message(STATUS "rsz: Python module for ${Python3_EXECUTABLE} (${Python3_VERSION}), installed to ${RSZ_PYTHON_INSTALL_DIR}")
elseif(RSZ_PYTHON STREQUAL "ON")
  message(FATAL_ERROR "RSZ_PYTHON=ON: pybind11 (pybind11-dev) and the Python headers (python3-dev) are needed")
else()
  message(STATUS "rsz: Python module skipped (needs pybind11-dev and python3-dev)")
endif()
