// Vector table and reset handler for the QEMU Cortex-M machines: copies .data, zeroes .bss, turns on
// the FPU (and with it MVE on the M55), runs the static constructors and main, and exits through
// semihosting with main's return value. Every fault stops the machine with a message.
#include <stdint.h>
#include <string.h>

#include "semihosting.h"

extern uint32_t __stack_top;
extern uint8_t __data_load[], __data_start[], __data_end[];
extern uint8_t __bss_start[], __bss_end[];

extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);

#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t*)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t*)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t*)0xE000ED38u)

__attribute__((noreturn)) void reset_handler(void) {
  // Full access to CP10 and CP11: the FPU and, on Armv8.1-M, the MVE (Helium) registers.
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  SCB_CPACR |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  memcpy(__data_start, __data_load, (size_t)(__data_end - __data_start));
  memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
  for (void (**init)(void) = __init_array_start; init != __init_array_end; ++init) (*init)();
  sh_exit(main());
}

// Reports the fault and the code address it hit, then stops with exit code 3.
__attribute__((noreturn)) static void report_fault(const char* what, const uint32_t* frame) {
  sh_write0("runner: fault: ");
  sh_write0(what);
  sh_write0("\n");
  sh_print_hex("  pc   ", frame[6]);
  sh_print_hex("  lr   ", frame[5]);
  sh_print_hex("  cfsr ", SCB_CFSR);
  sh_print_hex("  hfsr ", SCB_HFSR);
  sh_print_hex("  mmfar ", SCB_MMFAR);
  sh_print_hex("  bfar ", SCB_BFAR);
  sh_exit(3);
}

// The handlers find the stacked registers (r0-r3, r12, lr, pc, xpsr) on the active stack.
#define FAULT_HANDLER(name, text)                                                 \
  __attribute__((used)) void name##_report(const uint32_t* frame) { report_fault(text, frame); } \
  __attribute__((naked)) void name(void) {                                        \
    __asm__ volatile("tst lr, #4\n\t"                                             \
                     "ite eq\n\t"                                                 \
                     "mrseq r0, msp\n\t"                                          \
                     "mrsne r0, psp\n\t"                                          \
                     "b " #name "_report\n\t");                                   \
  }

#if __ARM_ARCH_PROFILE == 'M' && __ARM_ARCH >= 7
FAULT_HANDLER(hard_fault_handler, "hard fault")
FAULT_HANDLER(mem_manage_handler, "memory management fault")
FAULT_HANDLER(bus_fault_handler, "bus fault")
FAULT_HANDLER(usage_fault_handler, "usage fault")
FAULT_HANDLER(secure_fault_handler, "secure fault")
#else
// Armv6-M and Armv8-M baseline: no ITE, only the hard fault.
__attribute__((used)) void hard_fault_handler_report(const uint32_t* frame) { report_fault("hard fault", frame); }
__attribute__((naked)) void hard_fault_handler(void) {
  __asm__ volatile("mrs r0, msp\n\tb hard_fault_handler_report\n\t");
}
#define mem_manage_handler hard_fault_handler
#define bus_fault_handler hard_fault_handler
#define usage_fault_handler hard_fault_handler
#define secure_fault_handler hard_fault_handler
#endif

static void unexpected_interrupt(void) {
  sh_write0("runner: unexpected interrupt\n");
  sh_exit(3);
}

typedef void (*vector_t)(void);

__attribute__((section(".vectors"), used)) const vector_t vector_table[16] = {
    (vector_t)&__stack_top,
    reset_handler,
    unexpected_interrupt,  // NMI
    hard_fault_handler,
    mem_manage_handler,
    bus_fault_handler,
    usage_fault_handler,
    secure_fault_handler,
    0,
    0,
    0,
    unexpected_interrupt,  // SVCall
    unexpected_interrupt,  // debug monitor
    0,
    unexpected_interrupt,  // PendSV
    unexpected_interrupt,  // SysTick
};
