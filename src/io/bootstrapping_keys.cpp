// Bootstrapping keys as evaluation-key bundles (theo/io/bootstrapping_keys.h).

#include "theo/io/bootstrapping_keys.h"

#include <string>

#include "theo/errors.h"

namespace theo {

EvaluationKeysView view_of(const BootstrappingKeys& keys) {
  return EvaluationKeysView{&keys.relin, &keys.galois, &keys.to_sparse, &keys.to_dense};
}

void save(const Context& ctx, const BootstrappingKeys& keys, std::ostream& out,
          const SaveOptions& options) {
  if (options.galois_elements) {
    throw ParameterError(
        "save: bootstrapping keys are saved whole (bootstrapping needs every Galois key)");
  }
  save(ctx, view_of(keys), out, options);
}

std::vector<std::uint8_t> to_bytes(const Context& ctx, const BootstrappingKeys& keys,
                                   const SaveOptions& options) {
  if (options.galois_elements) {
    throw ParameterError(
        "to_bytes: bootstrapping keys are saved whole (bootstrapping needs every Galois key)");
  }
  return to_bytes(ctx, view_of(keys), options);
}

BootstrappingKeys to_bootstrapping_keys(EvaluationKeys&& keys, const char* who) {
  const auto missing = [who](const char* part) {
    throw ParameterError(std::string(who) + ": the evaluation keys have no " + part +
                         ", so they are not bootstrapping keys (save them from "
                         "Bootstrapper.generate_keys' result)");
  };
  if (keys.relin.empty()) missing("relinearization key");
  if (keys.galois.empty()) missing("Galois keys");
  if (keys.to_sparse.empty() || keys.to_dense.empty()) missing("encapsulation keys");
  BootstrappingKeys out;
  out.relin = std::move(keys.relin);
  out.galois = std::move(keys.galois);
  out.to_sparse = std::move(keys.to_sparse);
  out.to_dense = std::move(keys.to_dense);
  return out;
}

BootstrappingKeys load_bootstrapping_keys(const ContextPtr& ctx, std::istream& in,
                                          const LoadOptions& options) {
  if (options.galois_elements) {
    throw ParameterError(
        "load_bootstrapping_keys: bootstrapping keys are loaded whole (bootstrapping needs every "
        "Galois key); load a subset with load_evaluation_keys");
  }
  return to_bootstrapping_keys(load_evaluation_keys(ctx, in, options), "load_bootstrapping_keys");
}

BootstrappingKeys load_bootstrapping_keys(const ContextPtr& ctx,
                                          std::span<const std::uint8_t> bytes,
                                          const LoadOptions& options) {
  if (options.galois_elements) {
    throw ParameterError(
        "load_bootstrapping_keys: bootstrapping keys are loaded whole (bootstrapping needs every "
        "Galois key); load a subset with load_evaluation_keys");
  }
  return to_bootstrapping_keys(load_evaluation_keys(ctx, bytes, options),
                               "load_bootstrapping_keys");
}

}  // namespace theo
