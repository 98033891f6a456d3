#pragma once
// theodosian._core, serialization: the description of each serializable class (Traits: its Python
// name and how it is read; written(): what it is written as), which serialization_bindings.cpp
// turns into the same methods on every class.

#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "bindings.h"
#include "theo/io/bootstrapping_keys.h"

// Included by serialization_bindings.cpp alone: its definitions are local to that file (the
// readers are lambda types).
namespace theopy {
namespace {  // NOLINT(google-build-namespaces)

using theo::LoadOptions;
using theo::SaveOptions;

// ---- per-type traits ---------------------------------------------------------------------------
// name: the Python class; size / save: the C++ writer; load: the C++ reader wrapped.

std::optional<std::vector<u32>> elements_from(const theo::Context& ctx,
                                              std::optional<std::vector<theo::i64>> rotations,
                                              std::optional<std::vector<u32>> galois_elements,
                                              bool conjugation) {
  if (!rotations && !galois_elements && !conjugation) return std::nullopt;
  std::vector<u32> out = galois_elements.value_or(std::vector<u32>{});
  for (const theo::i64 r : rotations.value_or(std::vector<theo::i64>{})) {
    const u32 g = theo::galois_element_for_rotation(r, ctx.log_n());
    if (g != 1) out.push_back(g);
  }
  if (conjugation) out.push_back(theo::galois_element_for_conjugation(ctx.log_n()));
  return out;
}

struct WEvaluationKeys {
  SessionPtr s;
  std::shared_ptr<const theo::RelinKey> relin;
  std::shared_ptr<theo::GaloisKeys> galois;
  std::shared_ptr<const theo::BootstrappingKeys> boot;  // the encapsulation keys' owner
};

template <typename W>
struct Traits;

// The keys held as {session, shared_ptr<Key> k}; Load is the library's reader (load_secret_key and
// the like) as a callable type.
template <typename W, typename Load>
struct KeyTraits {
  template <typename In>
  static W load(const SessionPtr& s, In& in, const LoadOptions& o) {
    using Key = std::remove_const_t<typename decltype(W::k)::element_type>;
    return {s, std::make_shared<Key>(Load{}(s->ctx, in, o))};
  }
};

template <>
struct Traits<WSecretKey>
    : KeyTraits<WSecretKey, decltype([](auto&&... a) { return theo::load_secret_key(a...); })> {
  static constexpr const char* name = "SecretKey";
};
template <>
struct Traits<WPublicKey>
    : KeyTraits<WPublicKey, decltype([](auto&&... a) { return theo::load_public_key(a...); })> {
  static constexpr const char* name = "PublicKey";
};
template <>
struct Traits<WRelinKey>
    : KeyTraits<WRelinKey, decltype([](auto&&... a) { return theo::load_relin_key(a...); })> {
  static constexpr const char* name = "RelinKey";
};
template <>
struct Traits<WGaloisKeys>
    : KeyTraits<WGaloisKeys, decltype([](auto&&... a) { return theo::load_galois_keys(a...); })> {
  static constexpr const char* name = "GaloisKeys";
};

template <>
struct Traits<WBootstrappingKeys> {
  static constexpr const char* name = "BootstrappingKeys";
  template <typename In>
  static WBootstrappingKeys load(const SessionPtr& s, In& in, const LoadOptions& o) {
    return {s, std::make_shared<const theo::BootstrappingKeys>(
                   theo::load_bootstrapping_keys(s->ctx, in, o))};
  }
};

theo::EvaluationKeysView view_of(const WEvaluationKeys& w) {
  theo::EvaluationKeysView v;
  v.relin = w.relin.get();
  v.galois = w.galois.get();
  if (w.boot) {
    v.to_sparse = &w.boot->to_sparse;
    v.to_dense = &w.boot->to_dense;
  }
  return v;
}

template <>
struct Traits<WEvaluationKeys> {
  static constexpr const char* name = "EvaluationKeys";
  template <typename In>
  static WEvaluationKeys load(const SessionPtr& s, In& in, const LoadOptions& o) {
    theo::EvaluationKeys ek = theo::load_evaluation_keys(s->ctx, in, o);
    WEvaluationKeys w{s, nullptr, nullptr, nullptr};
    const bool has_boot = !ek.to_sparse.empty();
    if (has_boot && !ek.relin.empty() && !ek.galois.empty()) {
      auto boot = std::make_shared<theo::BootstrappingKeys>(
          theo::to_bootstrapping_keys(std::move(ek), "EvaluationKeys.load"));
      w.relin = std::shared_ptr<const theo::RelinKey>(boot, &boot->relin);
      w.galois = std::shared_ptr<theo::GaloisKeys>(boot, &boot->galois);
      w.boot = std::move(boot);
      return w;
    }
    if (has_boot) {
      throw theo::ParameterError(
          "EvaluationKeys.load: the data has bootstrapping encapsulation keys without the "
          "relinearization and Galois keys bootstrapping also needs");
    }
    if (!ek.relin.empty()) w.relin = std::make_shared<theo::RelinKey>(std::move(ek.relin));
    if (!ek.galois.empty()) w.galois = std::make_shared<theo::GaloisKeys>(std::move(ek.galois));
    return w;
  }
};

// Plaintexts and ciphertexts remember the slot-count hint their data carries (ObjectInfo).
template <typename W, typename Load>
struct ValueTraits {
  template <typename In>
  static W load(const SessionPtr& s, In& in, const LoadOptions& o) {
    theo::ObjectInfo info;
    auto value = Load{}(s->ctx, in, o, &info);
    return {s, std::move(value), info.real_slots};
  }
};

template <>
struct Traits<WPlaintext>
    : ValueTraits<WPlaintext, decltype([](auto&&... a) { return theo::load_plaintext(a...); })> {
  static constexpr const char* name = "Plaintext";
};
template <>
struct Traits<WCiphertext>
    : ValueTraits<WCiphertext, decltype([](auto&&... a) { return theo::load_ciphertext(a...); })> {
  static constexpr const char* name = "Ciphertext";
};

// What each type is written as: the argument of the library's writers (serialized_size, save,
// to_bytes).
template <typename W>
const auto& written(const W& w) {
  return *w.k;
}
const theo::Plaintext& written(const WPlaintext& w) {
  return w.pt;
}
const theo::Ciphertext& written(const WCiphertext& w) {
  return w.ct;
}
theo::EvaluationKeysView written(const WBootstrappingKeys& w) {
  return theo::view_of(*w.k);
}
theo::EvaluationKeysView written(const WEvaluationKeys& w) {
  return view_of(w);
}

template <typename W>
void save_stream(const W& w, std::ostream& out, const SaveOptions& o) {
  theo::save(*w.s->ctx, written(w), out, o);
}
// Bootstrapping keys go to a stream through their own save(), which refuses a subset of keys.
void save_stream(const WBootstrappingKeys& w, std::ostream& out, const SaveOptions& o) {
  theo::save(*w.s->ctx, *w.k, out, o);
}

template <typename W>
bool real_hint(const W&) {
  return false;
}
template <>
bool real_hint(const WPlaintext& w) {
  return w.real;
}
template <>
bool real_hint(const WCiphertext& w) {
  return w.real;
}

}  // namespace
}  // namespace theopy
