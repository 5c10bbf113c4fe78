// Glue between the interpreter's aten ops and the portable kernels (kernels/portable): the host
// and the freestanding runtime compute float ops with the same code. The aten op's infer keeps the
// user-facing validation; a portable prepare error at run time names the node and the kernel.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/error_message.h"
#include "cortexm/portable/binary.h"
#include "cortexm/portable/shape.h"
#include "cortexm/portable/unary.h"
#include "ops/op_util.h"
#include "ops/binary/runtime/float_binary_codec.h"
#include "ops/activation/runtime/unary_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

inline void check_portable(const OpArgs& args, const char* kernel, const Error& error) {
  if (!error.ok()) args.fail(error_message(kernel, error));
}

inline portable::Shape portable_shape(const OpArgs& args, const std::vector<int64_t>& dims,
                                      const char* argument = "self") {
  if (dims.size() > static_cast<size_t>(portable::kMaxDims))
    args.fail(std::string(argument) + " " + shape_to_string(dims) + " has rank " +
              std::to_string(dims.size()) + "; float and data-movement kernels take at most " +
              std::to_string(portable::kMaxDims) + " dims");
  portable::Shape shape;
  check_portable(args, "shape",
                 portable::make_shape(dims.data(), static_cast<int64_t>(dims.size()), &shape,
                                      argument));
  return shape;
}

inline int32_t element_size(const Tensor& t) { return static_cast<int32_t>(dtype_size(t.dtype())); }

// A float32 -> float32 elementwise op run by portable::unary_f32; `make` reads the attributes
// (failing on bad ones) and returns the op and its constants.
using UnaryParamsFn = std::function<portable::UnaryParams(const OpArgs&)>;

// The op as a program's FloatUnary kernel (the function and its constants).
inline EncodeFn float_unary_encode(UnaryParamsFn make) {
  return [make](program::ParamsBuilder& b, const NodeContext& node) {
    flatbuffers::Offset<fb::UnaryParams> table;
    const portable::UnaryParams p = make(node);
    if (!program::encode_unary(b.fbb(), p, &table))
      node.fail("a program has no float unary function " + std::to_string(static_cast<int>(p.op)));
    return program::encoded(fb::KernelId_FloatUnary, table);
  };
}

inline OpSchema portable_unary_schema(const std::string& name, std::vector<AttrSpec> attrs,
                                      UnaryParamsFn make) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = std::move(attrs);
  s.infer = [make](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    portable_shape(ctx, ctx.input(0).shape);  // rank <= 6
    make(ctx);  // attribute checks happen at build time, not first run
    return same_as_input(ctx);
  };
  s.kernel = [make](const KernelContext& ctx) {
    portable::UnaryParams params = make(ctx);
    params.numel = ctx.input(0).numel();
    check_portable(ctx, "unary", portable::unary_prepare(params));
    portable::unary_f32(params, ctx.input(0).data<float>(), ctx.output().data<float>());
  };
  s.encode = float_unary_encode(make);
  s.is_unary_elementwise = true;
  return s;
}

// A float attribute as the float32 a kernel takes, which must be finite.
inline float finite_float_attr(const OpArgs& args, const char* name) {
  const float value = static_cast<float>(args.f(name));
  if (!std::isfinite(value))
    args.fail(std::string("attribute '") + name + "' = " + std::to_string(args.f(name)) + " must be finite");
  return value;
}

inline void register_portable_unary(OpRegistry& registry, const std::string& name,
                                    std::vector<AttrSpec> attrs, UnaryParamsFn make) {
  registry.add(portable_unary_schema(name, std::move(attrs), std::move(make)));
}

// An op without attributes.
inline OpSchema portable_unary_schema(const std::string& name, portable::UnaryOp op) {
  return portable_unary_schema(name, {}, [op](const OpArgs&) {
    portable::UnaryParams p;
    p.op = op;
    return p;
  });
}

inline void register_portable_unary(OpRegistry& registry, const std::string& name,
                                    portable::UnaryOp op) {
  registry.add(portable_unary_schema(name, op));
}

// A float32 (x) float32 -> float32 op with numpy broadcasting run by portable::binary_f32; `make`
// returns the op and alpha.
using BinaryParamsFn = std::function<portable::BinaryParams(const OpArgs&)>;

inline void register_portable_binary(OpRegistry& registry, const std::string& name,
                                     std::vector<AttrSpec> attrs, BinaryParamsFn make) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}, {"other"}};
  s.attrs = std::move(attrs);
  s.infer = [make](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    require_dtype(ctx, 1, {DType::kFloat32});
    portable_shape(ctx, ctx.input(0).shape, "self");  // rank <= 6
    portable_shape(ctx, ctx.input(1).shape, "other");
    make(ctx);
    return std::vector<TensorInfo>{
        make_info(DType::kFloat32, broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape))};
  };
  s.kernel = [make](const KernelContext& ctx) {
    portable::BinaryParams params = make(ctx);
    check_portable(ctx, "binary",
                   portable::binary_prepare(portable_shape(ctx, ctx.input(0).shape(), "self"),
                                            portable_shape(ctx, ctx.input(1).shape(), "other"),
                                            &params));
    portable::binary_f32(params, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                         ctx.output().data<float>());
  };
  // A program runs it as the FloatBinary float fallback.
  s.encode = [make](program::ParamsBuilder& b, const NodeContext& node) {
    flatbuffers::Offset<fb::FloatBinaryParams> table;
    if (!program::encode_float_binary(b.fbb(), make(node), &table))
      node.fail("a program has no float binary function " + std::to_string(static_cast<int>(make(node).op)));
    return program::encoded(fb::KernelId_FloatBinary, table);
  };
  registry.add(std::move(s));
}

inline void register_portable_binary(OpRegistry& registry, const std::string& name,
                                     portable::BinaryOp op) {
  register_portable_binary(registry, name, {}, [op](const OpArgs&) {
    portable::BinaryParams p;
    p.op = op;
    return p;
  });
}

}  // namespace cortexm::ops
