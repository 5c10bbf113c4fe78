// The data movement ops generic rewrites insert: a dim order change and a reshape.
#pragma once

namespace cortexm {

constexpr const char* kClone = "dim_order_ops._clone_dim_order.default";
constexpr const char* kView = "aten.view_copy.default";

}  // namespace cortexm
