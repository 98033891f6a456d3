// Bindings of the keys (SecretKey, PublicKey, RelinKey, GaloisKeys) and the KeyGenerator.

#include "bindings.h"

namespace theopy {

namespace {

// The key make(generator) returns, made with the GIL released and the generator locked (its
// random stream is one sequence), wrapped as the Python-side W.
template <typename W, typename Make>
W generate(WKeyGenerator& self, Make make) {
  nb::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(self.mu);
  auto key = make(*self.kg);
  return W{self.s, std::make_shared<decltype(key)>(std::move(key))};
}

}  // namespace

void bind_keys(nb::module_& m) {
  // ---- keys ----------------------------------------------------------------------------------
  nb::class_<WSecretKey>(m, "SecretKey",
                         "A ternary secret key (keep it private). Made by KeyGenerator.")
      .def_prop_ro(
          "hamming_weight", [](const WSecretKey& k) { return k.k->hamming_weight(); },
          "Number of nonzero coefficients.")
      .def_prop_ro(
          "context", [](const WSecretKey& k) { return WContext{k.s}; }, "The context.")
      .def(
          "coefficients",
          [](const WSecretKey& k) {
            std::vector<theo::i32> c = k.k->coefficients();
            return to_numpy(std::move(c));
          },
          nb::sig("def coefficients(self) -> numpy.typing.NDArray[numpy.int32]"),
          "The coefficients in {-1, 0, 1} as an int32 array (a copy).")
      .def("__repr__", [](const WSecretKey& k) {
        return "SecretKey(hamming_weight=" + std::to_string(k.k->hamming_weight()) + ")";
      });
  nb::class_<WPublicKey>(m, "PublicKey", "A public encryption key. Made by KeyGenerator.")
      .def_prop_ro(
          "context", [](const WPublicKey& k) { return WContext{k.s}; }, "The context.")
      .def("__repr__", [](const WPublicKey&) { return std::string("PublicKey()"); });
  nb::class_<WRelinKey>(m, "RelinKey",
                        "A relinearization key (s^2 -> s). Made by KeyGenerator.relin_key().")
      .def_prop_ro(
          "context", [](const WRelinKey& k) { return WContext{k.s}; }, "The context.")
      .def_prop_ro(
          "dnum", [](const WRelinKey& k) { return k.k->key().dnum(); },
          "Number of key-switching digits.")
      .def("__repr__", [](const WRelinKey& k) {
        return "RelinKey(dnum=" + std::to_string(k.k->key().dnum()) + ")";
      });
  nb::class_<WGaloisKeys>(m, "GaloisKeys",
                          "Keys for rotations and conjugation, one per Galois element. Made by "
                          "KeyGenerator.galois_keys().")
      .def_prop_ro(
          "context", [](const WGaloisKeys& k) { return WContext{k.s}; }, "The context.")
      .def_prop_ro(
          "galois_elements", [](const WGaloisKeys& k) { return k.k->galois_elements(); },
          "The Galois elements that have a key.")
      .def(
          "has_rotation",
          [](const WGaloisKeys& k, theo::i64 r) {
            const u32 g = theo::galois_element_for_rotation(r, k.s->ctx->log_n());
            return g == 1 || k.k->contains(g);
          },
          "steps"_a, "True when a left rotation by `steps` slots has a key.")
      .def_prop_ro(
          "has_conjugation",
          [](const WGaloisKeys& k) {
            return k.k->contains(theo::galois_element_for_conjugation(k.s->ctx->log_n()));
          },
          "True when conjugation has a key.")
      .def(
          "__contains__", [](const WGaloisKeys& k, u32 g) { return k.k->contains(g); },
          "galois_element"_a, "True when the Galois element has a key.")
      .def(
          "__len__", [](const WGaloisKeys& k) { return k.k->galois_elements().size(); },
          "Number of keys.")
      .def("__repr__", [](const WGaloisKeys& k) {
        return "GaloisKeys(" + std::to_string(k.k->galois_elements().size()) + " keys)";
      });

  // ---- KeyGenerator --------------------------------------------------------------------------
  nb::class_<WKeyGenerator>(
      m, "KeyGenerator",
      "Generates secret, public, relinearization and Galois keys. Seeded from the OS unless a "
      "seed is given (a seed makes every key, in the same call order, bit-identical across "
      "runs and backends; for tests only).")
      .def(
          "__init__",
          [](WKeyGenerator* self, const WContext& ctx, nb::handle seed) {
            std::unique_ptr<theo::KeyGenerator> kg;
            if (seed.is_none()) {
              kg = std::make_unique<theo::KeyGenerator>(ctx.s->ctx);
            } else {
              kg = std::make_unique<theo::KeyGenerator>(ctx.s->ctx, to_seed(seed, "KeyGenerator"));
            }
            new (self) WKeyGenerator{ctx.s, std::move(kg), {}};
          },
          "context"_a, "seed"_a = nb::none(),
          nb::sig("def __init__(self, context: Context, seed: bytes | int | None = None) -> None"),
          "A key generator for `context`; seed: 32 bytes or an int (deterministic keys), None: "
          "from the OS.")
      .def(
          "secret_key",
          [](WKeyGenerator& self) {
            return generate<WSecretKey>(self, [](auto& kg) { return kg.create_secret_key(); });
          },
          "A dense ternary secret key (hamming weight from the parameters, N/2 by default).")
      .def(
          "sparse_secret_key",
          [](WKeyGenerator& self) {
            return generate<WSecretKey>(self,
                                        [](auto& kg) { return kg.create_sparse_secret_key(); });
          },
          "A sparse secret key (sparse_hamming_weight; ParameterError when the set has none).")
      .def(
          "secret_key_with_weight",
          [](WKeyGenerator& self, u32 h) {
            return generate<WSecretKey>(
                self, [h](auto& kg) { return kg.create_secret_key_with_weight(h); });
          },
          "hamming_weight"_a, "A ternary secret key with the given hamming weight.")
      .def(
          "public_key",
          [](WKeyGenerator& self, const WSecretKey& sk) {
            return generate<WPublicKey>(self,
                                        [&](auto& kg) { return kg.create_public_key(*sk.k); });
          },
          "secret_key"_a, "The public key of a secret key.")
      .def(
          "relin_key",
          [](WKeyGenerator& self, const WSecretKey& sk) {
            return generate<WRelinKey>(self, [&](auto& kg) { return kg.create_relin_key(*sk.k); });
          },
          "secret_key"_a, "The relinearization key (s^2 -> s).")
      .def(
          "galois_keys",
          [](WKeyGenerator& self, const WSecretKey& sk, std::vector<int> rotations,
             bool conjugation, std::optional<bool> progress) {
            const u32 log_n = self.s->ctx->log_n();
            std::vector<u32> elements;
            for (const int r : rotations)
              elements.push_back(theo::galois_element_for_rotation(r, log_n));
            if (conjugation) elements.push_back(theo::galois_element_for_conjugation(log_n));
            auto keys = std::make_shared<theo::GaloisKeys>();
            {
              nb::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.mu);
              // An empty set stamped with the context (validates the secret key).
              *keys = self.kg->create_galois_keys(*sk.k, std::span<const int>{}, false);
            }
            add_galois_elements(self, sk, elements, *keys, progress);
            return WGaloisKeys{self.s, std::move(keys)};
          },
          "secret_key"_a, "rotations"_a = std::vector<int>{}, "conjugation"_a = false,
          "progress"_a = nb::none(),
          "Keys for left rotations by each r in `rotations` (any sign, taken mod N/2) and, when "
          "conjugation is True, for conjugation. progress: show a progress bar (tqdm when "
          "installed, else a simple stderr bar); None: when there are 8 keys or more and stderr "
          "is a terminal. Ctrl-C interrupts between keys.")
      .def(
          "add_galois_keys",
          [](WKeyGenerator& self, const WSecretKey& sk, WGaloisKeys& keys,
             std::vector<int> rotations, std::vector<u32> galois_elements, bool conjugation,
             std::optional<bool> progress) {
            const u32 log_n = self.s->ctx->log_n();
            std::vector<u32> elements = galois_elements;
            for (const int r : rotations)
              elements.push_back(theo::galois_element_for_rotation(r, log_n));
            if (conjugation) elements.push_back(theo::galois_element_for_conjugation(log_n));
            add_galois_elements(self, sk, elements, *keys.k, progress);
          },
          "secret_key"_a, "keys"_a, "rotations"_a = std::vector<int>{},
          "galois_elements"_a = std::vector<u32>{}, "conjugation"_a = false,
          "progress"_a = nb::none(),
          "Adds keys for more rotations / Galois elements / conjugation to an existing "
          "GaloisKeys (do not use the keys from other threads meanwhile).");
}

}  // namespace theopy
