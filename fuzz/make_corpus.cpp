// Writes the seed corpus of the fuzz harnesses: valid objects of every type for the fuzzing
// Context (fuzz_context.h), compact and expanded, and the bundled presets as parameter files.
// Deterministic (seeded key generation), so the committed corpus can be remade:
//   build/fuzz/fuzz_make_corpus fuzz/corpus presets

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_context.h"
#include "theo/ring/automorphism.h"

namespace fs = std::filesystem;
using namespace theo;

namespace {

fs::path root;

void write(const std::string& harness, const std::string& name,
           const std::vector<std::uint8_t>& bytes) {
  // inspect gets the small objects of every harness (headers and metadata are what it reads).
  for (const std::string& h : {harness, std::string("inspect")}) {
    if (h == "inspect" && (harness == "parameter_file" || bytes.size() > 50000)) continue;
    fs::create_directories(root / h);
    std::ofstream out(root / h / (h == "inspect" ? harness + "_" + name : name), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <corpus folder> <presets folder>\n", argv[0]);
    return 2;
  }
  root = argv[1];
  for (const auto& e : fs::directory_iterator(argv[2])) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    write("parameter_file", e.path().filename().string(),
          std::vector<std::uint8_t>(text.begin(), text.end()));
  }
  const std::string json = fuzz::kParametersJson;
  write("parameter_file", "fuzz_n10.json", std::vector<std::uint8_t>(json.begin(), json.end()));
  write("parameters", "fuzz_n10", to_bytes(parse_parameters(json)));
  write("parameters", "test_boot_n12", to_bytes(load_preset("test_boot_n12")));

  const ContextPtr& ctx = fuzz::context();
  Prng::Seed seed{};
  seed[0] = 24;
  KeyGenerator keygen(ctx, seed);
  const SecretKey sk = keygen.create_secret_key();
  const PublicKey pk = keygen.create_public_key(sk);
  const RelinKey relin = keygen.create_relin_key(sk);
  const GaloisKeys galois = keygen.create_galois_keys(sk, {1}, true);
  const SecretKey sparse = keygen.create_secret_key_with_weight(16);
  const SwitchingKey to_sparse = keygen.create_switching_key(sparse, sk.ntt().cref());
  const SwitchingKey to_dense = keygen.create_switching_key(sk, sparse.ntt().cref());
  SaveOptions expanded;
  expanded.compact = false;

  write("secret_key", "dense", to_bytes(*ctx, sk));
  write("secret_key", "sparse", to_bytes(*ctx, sparse));
  write("public_key", "compact", to_bytes(*ctx, pk));
  write("public_key", "expanded", to_bytes(*ctx, pk, expanded));
  write("relin_key", "compact", to_bytes(*ctx, relin));
  write("relin_key", "expanded", to_bytes(*ctx, relin, expanded));
  write("galois_keys", "compact", to_bytes(*ctx, galois));
  SaveOptions one = expanded;
  one.galois_elements = std::vector<u32>{galois_element_for_rotation(1, ctx->log_n())};
  write("galois_keys", "one_expanded", to_bytes(*ctx, galois, one));
  SaveOptions one_compact;
  one_compact.galois_elements = one.galois_elements;
  write("evaluation_keys", "bootstrapping",
        to_bytes(*ctx, EvaluationKeysView{&relin, &galois, &to_sparse, &to_dense}, one_compact));
  write("evaluation_keys", "relin_expanded",
        to_bytes(*ctx, EvaluationKeysView{&relin, nullptr, nullptr, nullptr}, expanded));
  write("evaluation_keys", "galois", to_bytes(*ctx, EvaluationKeysView{nullptr, &galois}));

  const Encoder encoder(ctx);
  std::vector<double> x(64);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<double>(i) / 64.0 - 0.5;
  const Plaintext pt1 = encoder.encode(x, 1);
  const Plaintext pt0 = encoder.encode(x, 0);
  SaveOptions real;
  real.real_slots = true;
  write("plaintext", "level1_real", to_bytes(*ctx, pt1, real));
  write("plaintext", "level0", to_bytes(*ctx, pt0));
  Encryptor sym(ctx, sk, seed);
  Encryptor pub(ctx, pk, seed);
  const Evaluator ev(ctx);
  const Ciphertext seeded = sym.encrypt(pt1);
  const Ciphertext full = pub.encrypt(pt1);
  write("ciphertext", "seeded", to_bytes(*ctx, seeded, real));
  write("ciphertext", "seeded_expanded", to_bytes(*ctx, seeded, expanded));
  write("ciphertext", "three_polys", to_bytes(*ctx, ev.multiply(full, full)));
  write("ciphertext", "level0", to_bytes(*ctx, pub.encrypt(pt0)));
  std::printf("corpus written to %s\n", root.c_str());
  return 0;
}
