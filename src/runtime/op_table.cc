// Kernel id -> prepare / run, from the generated runtime/ops/ops.def (every op family's
// src/ops/<family>/runtime/ops.def in kernel id order): one OpImpl per kernel and all_ops(), the
// resolver that registers them all.
#include "runtime/op_context.h"
#include "runtime/op_resolver.h"
#include "runtime/ops/ops.h"

namespace cortexm::runtime {

#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem) \
  Status prepare_##stem(const OpContext& ctx);                                 \
  void run_##stem(const OpContext& ctx);
#define RUNTIME_BINARY(id, params, type, stem)
#include "runtime/ops/ops.def"
#undef RUNTIME_BINARY
#undef RUNTIME_OP

// The kernels that write their output over input 0 from some bytes below it (OpImpl::in_place_lag).
constexpr InPlaceLagFn in_place_lag_of(fb::KernelId id) {
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem)
#define RUNTIME_BINARY(id, params, type, stem)
#define RUNTIME_IN_PLACE_LAG(kernel, fn) \
  if (id == fb::KernelId_##kernel) return fn;
#include "runtime/ops/ops.def"
#undef RUNTIME_IN_PLACE_LAG
#undef RUNTIME_BINARY
#undef RUNTIME_OP
  return nullptr;
}

// The kernels whose runs read state decoded once (OpImpl::state); the binary kernels all do.
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem)
#define RUNTIME_BINARY(id, params, type, stem)
#define RUNTIME_OP_STATE(kernel, state) extern const OpState state;
#include "runtime/ops/ops.def"
#undef RUNTIME_OP_STATE
#undef RUNTIME_BINARY
#undef RUNTIME_OP

constexpr const OpState* state_of(fb::KernelId id) {
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem)
#define RUNTIME_BINARY(id, params, type, stem)
#define RUNTIME_OP_STATE(kernel, state) \
  if (id == fb::KernelId_##kernel) return &state;
#include "runtime/ops/ops.def"
#undef RUNTIME_OP_STATE
#undef RUNTIME_BINARY
#undef RUNTIME_OP
  return nullptr;
}

// One object per kernel: a resolver that names it links it, and only then its prepare, run,
// params verifier and in-place lag.
namespace op {
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem)   \
  const OpImpl id{fb::OpParams_##params, verify_params<fb::params>, min_in, max_in, min_out, max_out, \
                  "must be " #min_in " to " #max_in " for this kernel",             \
                  "must be " #min_out " to " #max_out " for this kernel", is_float, \
                  prepare_##stem, run_##stem, in_place_lag_of(fb::KernelId_##id), state_of(fb::KernelId_##id)};
#define RUNTIME_BINARY(id, params, type, stem)                                                   \
  const OpImpl id{fb::OpParamsTraits<program::BinaryTable<params>>::enum_value,                  \
                  verify_params<program::BinaryTable<params>>, 2, 2, 1, 1,                       \
                  "must be 2 to 2 for this kernel", "must be 1 to 1 for this kernel", false,     \
                  prepare_binary<params, type, stem##_prepare>, run_binary<params, type, stem>, nullptr,  \
                  &kBinaryState<params, type>};
#include "runtime/ops/ops.def"
#undef RUNTIME_BINARY
#undef RUNTIME_OP
}  // namespace op

namespace {

constexpr OpEntry kAllOps[] = {
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem) CORTEXM_OP(id),
#define RUNTIME_BINARY(id, params, type, stem) CORTEXM_OP(id),
#include "runtime/ops/ops.def"
#undef RUNTIME_BINARY
#undef RUNTIME_OP
};

// Every kernel's name in id order, each ended by '\0' (one string: no table of pointers in flash).
constexpr char kNames[] =
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem) #id "\0"
#define RUNTIME_BINARY(id, params, type, stem) #id "\0"
#include "runtime/ops/ops.def"
#undef RUNTIME_BINARY
#undef RUNTIME_OP
    ;

constexpr size_t kNumOps = sizeof(kAllOps) / sizeof(kAllOps[0]);
static_assert(kNumOps == static_cast<size_t>(fb::KernelId_MAX) + 1, "ops.def must list every KernelId");

// The params table each kernel takes: every table of the OpParams union is some kernel's, so
// all_ops() verifies each table the union's verifier would (the loader's params_verifier).
constexpr fb::OpParams kParamsTables[] = {
#define RUNTIME_OP(id, params, min_in, max_in, min_out, max_out, is_float, stem) fb::OpParams_##params,
#define RUNTIME_BINARY(id, params, type, stem) fb::OpParamsTraits<program::BinaryTable<params>>::enum_value,
#include "runtime/ops/ops.def"
#undef RUNTIME_BINARY
#undef RUNTIME_OP
};

constexpr bool every_params_table_taken() {
  for (int table = fb::OpParams_MIN + 1; table <= fb::OpParams_MAX; ++table) {
    bool taken = false;
    for (fb::OpParams t : kParamsTables) taken = taken || t == table;
    if (!taken) return false;
  }
  return true;
}
static_assert(fb::OpParams_MIN == fb::OpParams_NONE && every_params_table_taken(),
              "every OpParams table must be taken by a kernel of ops.def");

constexpr bool listed_in_id_order() {
  for (size_t i = 0; i < kNumOps; ++i)
    if (kAllOps[i].kernel_id != i) return false;
  return true;
}
static_assert(listed_in_id_order(), "ops.def must list the ops in KernelId order");

}  // namespace

const OpResolver& all_ops() {
  static constexpr OpResolver resolver(kAllOps, static_cast<int32_t>(kNumOps));
  return resolver;
}

Status Program::load(const void* data, size_t size, Program* program) {
  return load(data, size, program, all_ops());
}

const char* kernel_name(uint8_t kernel_id) {
  if (kernel_id >= kNumOps) return "unknown";
  const char* name = kNames;
  for (uint8_t i = 0; i < kernel_id; ++i)
    while (*name++ != '\0') {
    }
  return name;
}

}  // namespace cortexm::runtime
