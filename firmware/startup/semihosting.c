// Semihosting calls: operation in r0, argument (usually a parameter block) in r1, result in r0.
#include "semihosting.h"

#include <string.h>

enum {
  SYS_OPEN = 0x01,
  SYS_CLOSE = 0x02,
  SYS_WRITE0 = 0x04,
  SYS_WRITE = 0x05,
  SYS_READ = 0x06,
  SYS_FLEN = 0x0c,
  SYS_GET_CMDLINE = 0x15,
  SYS_EXIT = 0x18,
  SYS_EXIT_EXTENDED = 0x20,
};

enum { ADP_Stopped_ApplicationExit = 0x20026 };

static intptr_t semihost(uint32_t op, const void* arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return (intptr_t)r0;
}

void sh_write0(const char* text) { semihost(SYS_WRITE0, text); }

void sh_print_int(const char* text, int64_t value) {
  char digits[24];
  char* p = digits + sizeof digits;
  *--p = '\0';
  *--p = '\n';
  uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
  do {
    *--p = (char)('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude);
  if (value < 0) *--p = '-';
  sh_write0(text);
  sh_write0(p);
}

void sh_print_hex(const char* text, uint32_t value) {
  char digits[12] = "0x";
  for (int i = 0; i < 8; ++i) digits[2 + i] = "0123456789abcdef"[(value >> (28 - 4 * i)) & 0xf];
  digits[10] = '\n';
  digits[11] = '\0';
  sh_write0(text);
  sh_write0(digits);
}

int sh_open(const char* path, int mode) {
  const uintptr_t block[3] = {(uintptr_t)path, (uintptr_t)mode, strlen(path)};
  return (int)semihost(SYS_OPEN, block);
}

int sh_close(int handle) {
  const uintptr_t block[1] = {(uintptr_t)handle};
  return (int)semihost(SYS_CLOSE, block);
}

long sh_flen(int handle) {
  const uintptr_t block[1] = {(uintptr_t)handle};
  return (long)semihost(SYS_FLEN, block);
}

// SYS_READ and SYS_WRITE return the number of bytes NOT transferred. Large transfers go in chunks.
static const size_t kChunk = 1u << 20;

int sh_read(int handle, void* data, size_t size) {
  uint8_t* p = (uint8_t*)data;
  while (size) {
    const size_t n = size < kChunk ? size : kChunk;
    const uintptr_t block[3] = {(uintptr_t)handle, (uintptr_t)p, n};
    if (semihost(SYS_READ, block) != 0) return -1;
    p += n;
    size -= n;
  }
  return 0;
}

int sh_write(int handle, const void* data, size_t size) {
  const uint8_t* p = (const uint8_t*)data;
  while (size) {
    const size_t n = size < kChunk ? size : kChunk;
    const uintptr_t block[3] = {(uintptr_t)handle, (uintptr_t)p, n};
    if (semihost(SYS_WRITE, block) != 0) return -1;
    p += n;
    size -= n;
  }
  return 0;
}

int sh_get_cmdline(char* buffer, size_t size) {
  uintptr_t block[2] = {(uintptr_t)buffer, size};
  return semihost(SYS_GET_CMDLINE, block) == 0 ? 0 : -1;
}

void sh_exit(int code) {
  // SYS_EXIT_EXTENDED carries the exit code on AArch32; plain SYS_EXIT only says success.
  const uintptr_t block[2] = {ADP_Stopped_ApplicationExit, (uintptr_t)code};
  semihost(SYS_EXIT_EXTENDED, block);
  semihost(SYS_EXIT, (const void*)(uintptr_t)ADP_Stopped_ApplicationExit);
  for (;;) {
  }
}
