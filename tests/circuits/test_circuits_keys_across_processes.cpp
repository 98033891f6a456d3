// A key set saved by one process and loaded by another decrypts and evaluates identically,
// bootstrapping included. The writer (this test) makes keys from the OS CSPRNG at the insecure
// bootstrapping preset test_boot_n12, evaluates a multiplication, a rotation and a bootstrapping,
// saves the parameters, the secret key, the public key, the evaluation keys (one bundle), the
// inputs and the results' words and decryptions, and starts this executable again as a second
// process (DISABLED_ReaderSide) that loads everything, evaluates the same operations and must get
// the same words and the same decrypted doubles, bit for bit.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "circuits_test_util.h"
#include "theo/io/bootstrapping_keys.h"

namespace theo::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDirVariable = "THEO_TEST_KEYS_DIR";

BootstrapConfig config() {
  BootstrapConfig c;
  c.slots = 64;
  return c;
}

struct Results {
  std::vector<u64> hashes;
  std::vector<double> values;  // re and im of every decrypted slot, in order
};

// The operations both processes run.
Results evaluate(const Context& ctx, const Evaluator& ev, const Bootstrapper& boot,
                 const BootstrappingKeys& keys, const Decryptor& dec, const Encoder& enc,
                 const Ciphertext& high, const Ciphertext& low) {
  const Ciphertext product = ev.multiply_relin_rescale(high, high, keys.relin);
  const Ciphertext rotated = ev.rotate(product, 1, keys.galois);
  const Ciphertext booted = boot.bootstrap(low, keys);
  Results r;
  for (const Ciphertext* ct : {&product, &rotated, &booted}) {
    r.hashes.push_back(hash_ct(ctx, *ct));
    for (const Cplx& z : enc.decode(dec.decrypt(*ct))) {
      r.values.push_back(z.real());
      r.values.push_back(z.imag());
    }
  }
  return r;
}

void write_results(const fs::path& path, const Results& r) {
  std::ofstream out(path, std::ios::binary);
  const u64 n = r.hashes.size(), m = r.values.size();
  out.write(reinterpret_cast<const char*>(&n), sizeof n);
  out.write(reinterpret_cast<const char*>(r.hashes.data()), static_cast<std::streamsize>(8 * n));
  out.write(reinterpret_cast<const char*>(&m), sizeof m);
  out.write(reinterpret_cast<const char*>(r.values.data()), static_cast<std::streamsize>(8 * m));
}

Results read_results(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  Results r;
  u64 n = 0, m = 0;
  in.read(reinterpret_cast<char*>(&n), sizeof n);
  r.hashes.resize(n);
  in.read(reinterpret_cast<char*>(r.hashes.data()), static_cast<std::streamsize>(8 * n));
  in.read(reinterpret_cast<char*>(&m), sizeof m);
  r.values.resize(m);
  in.read(reinterpret_cast<char*>(r.values.data()), static_cast<std::streamsize>(8 * m));
  return r;
}

template <typename F>
void to_file(const fs::path& path, F&& save_fn) {
  std::ofstream out(path, std::ios::binary);
  save_fn(out);
  ASSERT_TRUE(out.good()) << path;
}

TEST(KeysAcrossProcesses, SavedKeysEvaluateIdenticallyInAnotherProcess) {
  if (std::getenv(kDirVariable)) GTEST_SKIP() << "reader side of this test";
  const fs::path dir = fs::temp_directory_path() / ("theo_keys_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    const ParameterSet params = boot_test_params();
    const ContextPtr ctx = make_context(params);
    KeyGenerator keygen(ctx);  // seeded by the OS
    const SecretKey sk = keygen.create_secret_key();
    const PublicKey pk = keygen.create_public_key(sk);
    const Bootstrapper boot(ctx, config());
    const BootstrappingKeys keys = boot.generate_keys(keygen, sk, false);
    const Encoder enc(ctx);
    Encryptor encryptor(ctx, pk);
    const Decryptor dec(ctx, sk);
    const Evaluator ev(ctx);
    const auto x = random_slots(64);
    const Ciphertext high = encryptor.encrypt(enc.encode(x, ctx->default_encryption_level()));
    const Ciphertext low = encryptor.encrypt(enc.encode(x, 0));
    const Results r = evaluate(*ctx, ev, boot, keys, dec, enc, high, low);
    EXPECT_GE(bits(enc.decode(dec.decrypt(boot.bootstrap(low, keys))), x), 12);

    to_file(dir / "params.bin", [&](std::ostream& o) { save(params, o); });
    to_file(dir / "secret.key", [&](std::ostream& o) { save(*ctx, sk, o); });
    to_file(dir / "public.key", [&](std::ostream& o) { save(*ctx, pk, o); });
    to_file(dir / "evaluation.keys", [&](std::ostream& o) { save(*ctx, keys, o); });
    to_file(dir / "inputs.ct", [&](std::ostream& o) {
      save(*ctx, high, o);
      save(*ctx, low, o);
    });
    write_results(dir / "results.bin", r);
    std::printf("[two processes] evaluation keys: %llu bytes\n",
                static_cast<unsigned long long>(fs::file_size(dir / "evaluation.keys")));
  }
  // The second process: this executable, reader side only.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv(kDirVariable, dir.c_str(), 1);
    ::execl("/proc/self/exe", "reader", "--gtest_also_run_disabled_tests",
            "--gtest_filter=KeysAcrossProcesses.DISABLED_ReaderSide", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reader process status " << status;
  fs::remove_all(dir);
}

// Run only as the second process (disabled in the normal run).
TEST(KeysAcrossProcesses, DISABLED_ReaderSide) {
  const char* dir_env = std::getenv(kDirVariable);
  if (!dir_env) GTEST_SKIP() << "started by SavedKeysEvaluateIdenticallyInAnotherProcess";
  const fs::path dir = dir_env;
  std::ifstream pin(dir / "params.bin", std::ios::binary);
  const ParameterSet params = load_parameters(pin);
  const ContextPtr ctx = make_context(params);
  LoadOptions whole;
  whole.require_end = true;
  std::ifstream sin(dir / "secret.key", std::ios::binary);
  const SecretKey sk = load_secret_key(ctx, sin, whole);
  std::ifstream kin(dir / "public.key", std::ios::binary);
  const PublicKey pk = load_public_key(ctx, kin, whole);
  std::ifstream ein(dir / "evaluation.keys", std::ios::binary);
  const BootstrappingKeys keys = load_bootstrapping_keys(ctx, ein, whole);
  std::ifstream cin(dir / "inputs.ct", std::ios::binary);
  const Ciphertext high = load_ciphertext(ctx, cin);
  const Ciphertext low = load_ciphertext(ctx, cin, whole);

  const Bootstrapper boot(ctx, config());
  const Encoder enc(ctx);
  const Decryptor dec(ctx, sk);
  const Evaluator ev(ctx);
  const Results want = read_results(dir / "results.bin");
  const Results got = evaluate(*ctx, ev, boot, keys, dec, enc, high, low);
  EXPECT_EQ(got.hashes, want.hashes);
  ASSERT_EQ(got.values.size(), want.values.size());
  EXPECT_EQ(std::memcmp(got.values.data(), want.values.data(), 8 * got.values.size()), 0);
  // The loaded public key encrypts for the loaded secret key.
  Encryptor encryptor(ctx, pk);
  const std::vector<Cplx> y = random_slots(8);
  EXPECT_LT(max_abs_error(enc.decode(dec.decrypt(encryptor.encrypt(enc.encode(y, 1)))), y), 1e-6);
}

}  // namespace
}  // namespace theo::test
