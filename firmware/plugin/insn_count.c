// A QEMU TCG plugin that counts executed guest instructions (not cycles) and records the running
// count each time the guest enters one marker address (the runner's cortexm_insn_marker).
//
//   -plugin libinsn_count.so,marker=0x10000abc,out=counts.txt
//
// out receives one line per marker hit with the count so far, then "total N". Counting is inline
// per translation block: a block adds its instruction count when it starts, so a marker hit
// sees the count up to the end of the marker's own block; differences between hits are exact
// as long as no exception interrupts a block in between (the runner takes no interrupts).
//
// QEMU 7.2's plugin API (version 1) is declared here; Debian ships no qemu-plugin.h.
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
  const char* target_name;
  struct {
    int min;
    int cur;
  } version;
  bool system_emulation;
  union {
    struct {
      int smp_vcpus;
      int max_vcpus;
    } system;
  };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void* userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op,
                                              void* ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn* insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void* userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn* insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;  // one vCPU: the Cortex-M machines have a single core
static uint64_t marker = UINT64_MAX;
static FILE* out;

static void on_marker(unsigned int vcpu_index, void* userdata) {
  (void)vcpu_index;
  (void)userdata;
  fprintf(out, "%" PRIu64 "\n", executed);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    if (qemu_plugin_insn_vaddr(insn) == marker)
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS, NULL);
  }
}

static void on_qemu_exit(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  fprintf(out, "total %" PRIu64 "\n", executed);
  fclose(out);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info,
                                                               int argc, char** argv) {
  (void)info;
  const char* path = NULL;
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "marker=", 7) == 0) marker = strtoull(argv[i] + 7, NULL, 0) & ~(uint64_t)1;
    else if (strncmp(argv[i], "out=", 4) == 0) path = argv[i] + 4;
  }
  if (!path) {
    fprintf(stderr, "insn_count: needs out=FILE\n");
    return 1;
  }
  out = fopen(path, "w");
  if (!out) {
    fprintf(stderr, "insn_count: cannot write %s\n", path);
    return 1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
  return 0;
}
