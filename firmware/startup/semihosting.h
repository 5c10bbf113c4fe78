// Arm semihosting (the host debugger's or QEMU's services through `bkpt 0xab`): console output,
// host files and the program's exit code.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  SH_OPEN_READ_BINARY = 1,   // "rb"
  SH_OPEN_WRITE_BINARY = 5,  // "wb"
};

// Writes a zero-terminated string to the host's console.
void sh_write0(const char* text);
// Writes text, a decimal number and a newline.
void sh_print_int(const char* text, int64_t value);
// Writes text, a hexadecimal number and a newline.
void sh_print_hex(const char* text, uint32_t value);
// Returns a host file handle, or -1.
int sh_open(const char* path, int mode);
int sh_close(int handle);
// Length of an open file in bytes, or -1.
long sh_flen(int handle);
// Reads exactly `size` bytes; returns 0 on success, -1 on a short read.
int sh_read(int handle, void* data, size_t size);
// Writes exactly `size` bytes; returns 0 on success, -1 on a short write.
int sh_write(int handle, const void* data, size_t size);
// The command line QEMU was given with -semihosting-config arg=...; 0 on success.
int sh_get_cmdline(char* buffer, size_t size);
// Stops the machine; QEMU exits with `code`.
__attribute__((noreturn)) void sh_exit(int code);

#ifdef __cplusplus
}
#endif
