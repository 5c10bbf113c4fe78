# Toolchain for bare-metal Cortex-M with Debian's gcc-arm-none-eabi and newlib.
# CORTEXM_CPU picks the core: cortex-m0plus, cortex-m3, cortex-m4, cortex-m7, cortex-m33, cortex-m55.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CORTEXM_CPU "cortex-m55" CACHE STRING "Cortex-M core to build for")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CORTEXM_CPU)

if(CORTEXM_CPU STREQUAL "cortex-m55")
  set(_cpu_flags "-mcpu=cortex-m55 -mfloat-abi=hard")  # FPU and MVE (Helium) are implied
elseif(CORTEXM_CPU STREQUAL "cortex-m33")
  set(_cpu_flags "-mcpu=cortex-m33 -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
elseif(CORTEXM_CPU STREQUAL "cortex-m7")
  set(_cpu_flags "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard")
elseif(CORTEXM_CPU STREQUAL "cortex-m4")
  set(_cpu_flags "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
elseif(CORTEXM_CPU STREQUAL "cortex-m3")
  set(_cpu_flags "-mcpu=cortex-m3 -mfloat-abi=soft")
elseif(CORTEXM_CPU STREQUAL "cortex-m0plus")
  set(_cpu_flags "-mcpu=cortex-m0plus -mfloat-abi=soft")
else()
  message(FATAL_ERROR "CORTEXM_CPU=${CORTEXM_CPU} is not one of cortex-m0plus, cortex-m3, "
                      "cortex-m4, cortex-m7, cortex-m33, cortex-m55")
endif()

set(CMAKE_C_FLAGS_INIT "-mthumb ${_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "-mthumb ${_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "-mthumb ${_cpu_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections --specs=nano.specs")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
