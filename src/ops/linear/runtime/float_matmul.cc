// FloatMatmul (float fallback): aten.mm / bmm / linear / addmm through the portable kernels the
// interpreter also runs, on contiguous float32 tensors. Inputs: Mm, Bmm (a, b); Linear (input,
// weight, optional bias); Addmm (self, mat1, mat2).
#include "cortexm/portable/matmul.h"

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

const fb::FloatMatmulParams& table(const OpContext& ctx) { return *ctx.op.params_as_FloatMatmulParams(); }

// The product's operands: a [B?, M, K] at input a, b at input b ([B?, K, N], or weight [N, K]).
struct Operands {
  int32_t a, b;
  int32_t inputs;  // required inputs
};

Operands operands(fb::MatmulKind kind) {
  return kind == fb::MatmulKind_Addmm ? Operands{1, 2, 3} : Operands{0, 1, 2};
}

portable::Shape shape_of(std::initializer_list<int64_t> dims) {
  portable::Shape s;
  for (int64_t d : dims) s.dims[s.rank++] = d;
  return s;
}

// Validates the operand shapes and fills the product's output shape.
Status check_shapes(const OpContext& ctx, fb::MatmulKind kind, portable::Shape* out) {
  const Operands o = operands(kind);
  for (int32_t i = 0; i < o.inputs; ++i)
    if (!ctx.has_input(i)) return ctx.fail("inputs", i, "must be present for this kind");
  if (kind != fb::MatmulKind_Linear && ctx.num_inputs() != o.inputs)
    return ctx.fail("inputs.size", ctx.num_inputs(), "must be the kind's input count");
  const TensorView a = ctx.input(o.a), b = ctx.input(o.b);
  switch (kind) {
    case fb::MatmulKind_Mm:
    case fb::MatmulKind_Addmm:
      CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "input", a, 2));
      CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "input", b, 2));
      if (a.shape[1] != b.shape[0]) return ctx.fail("input.shape", b.shape[0], "must match the lhs's K", 0);
      *out = shape_of({a.shape[0], b.shape[1]});
      return kStatusOk;
    case fb::MatmulKind_Bmm:
      CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "input", a, 3));
      CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "input", b, 3));
      if (a.shape[0] != b.shape[0]) return ctx.fail("input.shape", b.shape[0], "must match the lhs's batch", 0);
      if (a.shape[2] != b.shape[1]) return ctx.fail("input.shape", b.shape[1], "must match the lhs's K", 1);
      *out = shape_of({a.shape[0], a.shape[1], b.shape[2]});
      return kStatusOk;
    case fb::MatmulKind_Linear: {
      if (a.rank < 1) return ctx.fail("input.rank", a.rank, "must be >= 1");
      CORTEXM_RETURN_IF_STATUS(require_rank(ctx, "weight", b, 2));
      if (b.shape[1] != a.shape[a.rank - 1]) return ctx.fail("weight.shape", b.shape[1], "must be the input's K", 1);
      if (ctx.has_input(2)) {
        const TensorView bias = ctx.input(2);
        if (bias.rank != 1 || bias.shape[0] != b.shape[0])
          return ctx.fail("bias.shape", bias.rank == 1 ? bias.shape[0] : bias.rank, "must be [N]");
      }
      *out = logical_shape(a);
      out->dims[a.rank - 1] = b.shape[0];
      return kStatusOk;
    }
    default:
      return ctx.fail("params.kind", kind, "must be a known MatmulKind");
  }
}

portable::MatmulParams matmul(const OpContext& ctx, const Operands& o) {
  const TensorView a = ctx.input(o.a), b = ctx.input(o.b);
  portable::MatmulParams p;
  const int32_t r = a.rank;
  p.batch = r == 3 ? a.shape[0] : 1;
  p.m = a.shape[r - 2], p.k = a.shape[r - 1], p.n = b.shape[b.rank - 1];
  return p;
}

portable::LinearParams linear(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  portable::LinearParams p;
  p.k = in.shape[in.rank - 1];
  p.n = ctx.input(1).shape[0];
  p.m = 1;
  for (int32_t d = 0; d + 1 < in.rank; ++d) p.m *= in.shape[d];
  return p;
}

portable::AddmmParams addmm(const OpContext& ctx) {
  const portable::MatmulParams mm = matmul(ctx, operands(fb::MatmulKind_Addmm));
  portable::AddmmParams p;
  p.m = mm.m, p.k = mm.k, p.n = mm.n;
  p.self = logical_shape(ctx.input(0));
  p.alpha = table(ctx).alpha();
  p.beta = table(ctx).beta();
  return p;
}

const float* f32(const TensorView& t) { return reinterpret_cast<const float*>(t.data); }

}  // namespace

Status prepare_float_matmul(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_contiguous_float(ctx));
  const fb::MatmulKind kind = table(ctx).kind();
  portable::Shape out;
  CORTEXM_RETURN_IF_STATUS(check_shapes(ctx, kind, &out));
  Error error;
  if (kind == fb::MatmulKind_Linear) error = portable::linear_prepare(linear(ctx));
  else if (kind == fb::MatmulKind_Addmm) error = portable::addmm_prepare(addmm(ctx));
  else error = portable::matmul_prepare(matmul(ctx, operands(kind)));
  if (!error.ok()) return ctx.fail(error);
  return require_output_shape(ctx, out);
}

void run_float_matmul(const OpContext& ctx) {
  auto* out = reinterpret_cast<float*>(ctx.output().data);
  switch (table(ctx).kind()) {
    case fb::MatmulKind_Mm:
      portable::mm_f32(matmul(ctx, operands(fb::MatmulKind_Mm)), f32(ctx.input(0)), f32(ctx.input(1)), out);
      break;
    case fb::MatmulKind_Bmm:
      portable::bmm_f32(matmul(ctx, operands(fb::MatmulKind_Bmm)), f32(ctx.input(0)), f32(ctx.input(1)), out);
      break;
    case fb::MatmulKind_Linear:
      portable::linear_f32(linear(ctx), f32(ctx.input(0)), f32(ctx.input(1)),
                           ctx.has_input(2) ? f32(ctx.input(2)) : nullptr, out);
      break;
    default:
      portable::addmm_f32(addmm(ctx), f32(ctx.input(0)), f32(ctx.input(1)), f32(ctx.input(2)), out);
  }
}

}  // namespace cortexm::runtime
