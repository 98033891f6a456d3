#pragma once
// Bootstrapping keys on streams and buffers: written as an evaluation-key bundle with every part
// (relinearization, Galois and the two encapsulation keys; theo/io/serialization.h), so a file
// of a client's bootstrapping keys is also a complete EvaluationKeys object.

#include <istream>
#include <ostream>
#include <span>

#include "theo/circuits/bootstrapper.h"
#include "theo/io/serialization.h"

namespace theo {

// The parts of `keys`, for save() / to_bytes() (no copy).
EvaluationKeysView view_of(const BootstrappingKeys& keys);

void save(const Context& ctx, const BootstrappingKeys& keys, std::ostream& out,
          const SaveOptions& options = {});
std::vector<std::uint8_t> to_bytes(const Context& ctx, const BootstrappingKeys& keys,
                                   const SaveOptions& options = {});

// ParameterError when the data lacks a part (e.g. evaluation keys saved without bootstrapping).
BootstrappingKeys load_bootstrapping_keys(const ContextPtr& ctx, std::istream& in,
                                          const LoadOptions& options = {});
BootstrappingKeys load_bootstrapping_keys(const ContextPtr& ctx,
                                          std::span<const std::uint8_t> bytes,
                                          const LoadOptions& options = {});
// Moves the parts of a complete bundle into BootstrappingKeys (ParameterError naming a missing
// part).
BootstrappingKeys to_bootstrapping_keys(EvaluationKeys&& keys, const char* who);

}  // namespace theo
