# Cross-compiling for aarch64 with Debian's toolchain (g++-aarch64-linux-gnu); the tests run under qemu-user
# (qemu-aarch64). Used by scripts/test-aarch64.sh.
#
# The core library needs nothing but the toolchain. The io library and the rsz program need the codec libraries
# for aarch64: RSZ_AARCH64_SYSROOT (a cache variable, or the environment variable of that name) names a Debian arm64
# tree holding them (scripts/test-aarch64.sh makes one with mmdebstrap); the compiler, CMake's searches and the
# emulator all use it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
if(NOT RSZ_AARCH64_SYSROOT AND DEFINED ENV{RSZ_AARCH64_SYSROOT})
  set(RSZ_AARCH64_SYSROOT "$ENV{RSZ_AARCH64_SYSROOT}")
endif()
if(RSZ_AARCH64_SYSROOT)
  set(RSZ_AARCH64_SYSROOT "${RSZ_AARCH64_SYSROOT}" CACHE PATH "Debian arm64 tree with the codec libraries" FORCE)
  set(CMAKE_SYSROOT "${RSZ_AARCH64_SYSROOT}")
  set(CMAKE_FIND_ROOT_PATH "${RSZ_AARCH64_SYSROOT}")
  set(rsz_target_root "${RSZ_AARCH64_SYSROOT}")
else()
  set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
  set(rsz_target_root /usr/aarch64-linux-gnu)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# ctest and gtest_discover_tests run the test programs through the emulator, with the target's libraries; tests
# that run the rsz program from a script or a test program go through tests/CMakeLists.txt's rsz-emulated wrapper.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L "${rsz_target_root}")
