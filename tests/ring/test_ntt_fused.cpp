// The fused transform arguments of the CPU reference backend (backend.h): out-of-place transforms
// (src), copies fused into the read (input_copy), per-poly constants over mixed bases, and
// ntt_sub_mul_scalar, each against the unfused ops it replaces; their capture on the CPU; and the
// argument errors both backends share (checks::transform_args, sub_mul_epilogue_args).

#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"
#include "theo/ring/shape_checks.h"

namespace theo::test {
namespace {

class NttFusedTest : public RingTest {
 protected:
  void SetUp() override {
    RingTest::SetUp();
    be_ = make_cpu_backend(mixed_ring(11, 8), 3);
  }
  RnsPoly copy_of(const RnsPoly& p) { return from_words(*be_, p.basis(), words(*be_, p)); }
  std::vector<u32> consts_for(const Basis& b) {
    std::vector<u32> c;
    for (u32 l = 0; l < b.size; ++l)
      c.push_back(uniform(be_->modulus(b[l]).q));
    return c;
  }
  std::unique_ptr<Backend> be_;
};

TEST_F(NttFusedTest, OutOfPlaceEqualsCopyThenInPlace) {
  const Basis basis = Basis::range(1, 5);
  const std::vector<u32> consts = consts_for(basis);
  for (const bool inverse : {false, true}) {
    for (const bool with_consts : {false, true}) {
      RnsPoly x = random_poly(*be_, basis), y = random_poly(*be_, basis);
      const auto x0 = words(*be_, x), y0 = words(*be_, y);
      RnsPoly ox = be_->make_poly(basis), oy = be_->make_poly(basis);
      RnsPoly rx = copy_of(x), ry = copy_of(y);
      const PolyRef out[] = {ox.ref(), oy.ref()}, ref[] = {rx.ref(), ry.ref()};
      const ConstPolyRef src[] = {x.cref(), y.cref()};
      const std::span<const u32> c =
          with_consts ? std::span<const u32>(consts) : std::span<const u32>();
      if (inverse) {
        be_->intt(out, c, src);
        be_->intt(ref, c);
      } else {
        be_->ntt(out, c, src);
        be_->ntt(ref, c);
      }
      EXPECT_EQ(words(*be_, ox), words(*be_, rx)) << inverse << with_consts;
      EXPECT_EQ(words(*be_, oy), words(*be_, ry)) << inverse << with_consts;
      EXPECT_EQ(words(*be_, x), x0) << "src changed";
      EXPECT_EQ(words(*be_, y), y0) << "src changed";
    }
  }
}

TEST_F(NttFusedTest, SrcEqualToPolyIsInPlace) {
  const Basis basis{3, 0, 6};
  RnsPoly x = random_poly(*be_, basis);
  RnsPoly r = copy_of(x);
  const PolyRef xs[] = {x.ref()}, rs[] = {r.ref()};
  const ConstPolyRef src[] = {x.cref()};
  be_->intt(xs, {}, src);
  be_->intt(rs);
  EXPECT_EQ(words(*be_, x), words(*be_, r));
}

TEST_F(NttFusedTest, InputCopyReceivesTheWordsRead) {
  const Basis basis = Basis::range(2, 4);
  for (const bool inverse : {false, true}) {
    for (const bool out_of_place : {false, true}) {
      RnsPoly x = random_poly(*be_, basis);
      const auto x0 = words(*be_, x);
      RnsPoly out = be_->make_poly(basis), input_copy = be_->make_poly(basis);
      RnsPoly ref = copy_of(x);
      const PolyRef target[] = {out_of_place ? out.ref() : x.ref()}, rs[] = {ref.ref()};
      const ConstPolyRef src[] = {x.cref()};
      const PolyRef input_copies[] = {input_copy.ref()};
      const std::span<const ConstPolyRef> s =
          out_of_place ? std::span<const ConstPolyRef>(src) : std::span<const ConstPolyRef>();
      if (inverse) {
        be_->intt(target, {}, s, input_copies);
        be_->intt(rs);
      } else {
        be_->ntt(target, {}, s, input_copies);
        be_->ntt(rs);
      }
      EXPECT_EQ(words(*be_, input_copy), x0);
      EXPECT_EQ(words(*be_, out_of_place ? out : x), words(*be_, ref));
    }
  }
}

// What ModUp issues: one INTT over slices of different bases, each with its own constants, out
// of place, with input copies; equal to one call per slice.
TEST_F(NttFusedTest, MixedBasesWithPerPolyConstants) {
  const Basis full = Basis::range(0, 7);
  RnsPoly in = random_poly(*be_, full);
  const u32 cuts[][2] = {{0, 3}, {3, 3}, {6, 1}};
  const std::vector<u32> consts = consts_for(full);
  RnsPoly coeff = be_->make_poly(full), input_copy = be_->make_poly(full);
  std::vector<PolyRef> dst, input_copies;
  std::vector<ConstPolyRef> src;
  for (const auto& [start, count] : cuts) {
    dst.push_back(coeff.slice(start, count));
    src.push_back(in.slice(start, count));
    input_copies.push_back(input_copy.slice(start, count));
  }
  be_->intt(dst, consts, src, input_copies);
  RnsPoly ref = copy_of(in);
  for (const auto& [start, count] : cuts) {
    const PolyRef one[] = {ref.slice(start, count)};
    be_->intt(one, std::span<const u32>(consts).subspan(start, count));
  }
  EXPECT_EQ(words(*be_, coeff), words(*be_, ref));
  EXPECT_EQ(words(*be_, input_copy), words(*be_, in));
}

TEST_F(NttFusedTest, NttSubMulScalarEqualsNttThenSubMulScalar) {
  const Basis basis = Basis::range(0, 6);
  const std::vector<u32> pre = consts_for(basis);
  for (const auto& [first, width] : {std::pair{0u, 6u}, std::pair{2u, 3u}, std::pair{5u, 1u}}) {
    for (const bool with_pre : {false, true}) {
      const Basis window = basis.slice(first, width);
      const std::vector<u32> s = consts_for(window);
      std::vector<RnsPoly> x, a, ref;
      std::vector<PolyRef> xs, refs;
      std::vector<ConstPolyRef> as;
      for (int k = 0; k < 3; ++k) {
        x.push_back(random_poly(*be_, basis));
        a.push_back(random_poly(*be_, window));
      }
      for (int k = 0; k < 3; ++k) {
        ref.push_back(copy_of(x[k]));
        xs.push_back(x[k].ref());
        refs.push_back(ref[k].ref());
        as.push_back(a[k].cref());
      }
      const std::span<const u32> c = with_pre ? std::span<const u32>(pre) : std::span<const u32>();
      be_->ntt_sub_mul_scalar(xs, c, as, first, s);
      be_->ntt(refs, c);
      for (int k = 0; k < 3; ++k) {
        const PolyRef y = ref[k].slice(first, width);
        be_->sub_mul_scalar(a[k].cref(), y, s, y);
        EXPECT_EQ(words(*be_, x[k]), words(*be_, ref[k])) << first << " " << width << " " << k;
      }
    }
  }
}

// Captured on the CPU, the new arguments replay like eager calls on the operands' current words.
TEST_F(NttFusedTest, CaptureReplaysFusedCalls) {
  const Basis basis = Basis::range(1, 4);
  RnsPoly in = random_poly(*be_, basis), a = random_poly(*be_, basis);
  RnsPoly out = be_->make_poly(basis), input_copy = be_->make_poly(basis);
  const std::vector<u32> s = consts_for(basis);
  const PolyRef outs[] = {out.ref()}, input_copies[] = {input_copy.ref()};
  const ConstPolyRef src[] = {in.cref()}, as[] = {a.cref()};
  const auto run = [&] {
    be_->intt(outs, {}, src, input_copies);
    be_->ntt_sub_mul_scalar(outs, {}, as, 0, s);
  };
  be_->begin_capture();
  run();
  auto work = be_->end_capture();
  EXPECT_EQ(work->kernel_count(), 2u);
  for (int rep = 0; rep < 2; ++rep) {
    be_->upload(random_words(*be_, basis).data(), in.ref());
    work->replay();
    const auto got_out = words(*be_, out), got_input_copy = words(*be_, input_copy);
    run();
    EXPECT_EQ(got_out, words(*be_, out));
    EXPECT_EQ(got_input_copy, words(*be_, input_copy));
    EXPECT_EQ(got_input_copy, words(*be_, in));
  }
}

TEST_F(NttFusedTest, ArgumentErrors) {
  const auto expect_error = [](const std::string& op, auto&& f) {
    try {
      f();
      ADD_FAILURE() << op << ": no ParameterError";
    } catch (const ParameterError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(op + ":", 0), 0u) << e.what();
    }
  };
  RnsPoly x = be_->make_poly(Basis{0, 1, 2}), y = be_->make_poly(Basis{0, 1, 2});
  RnsPoly z = be_->make_poly(Basis{0, 1});
  be_->fill_zero(x.ref());
  be_->fill_zero(y.ref());
  be_->fill_zero(z.ref());
  const PolyRef xs[] = {x.ref()};
  // src: wrong count, wrong shape, overlapping another poly.
  expect_error("ntt", [&] {
    const ConstPolyRef src[] = {y.cref(), y.cref()};
    be_->ntt(xs, {}, src);
  });
  expect_error("intt", [&] {
    const ConstPolyRef src[] = {z.cref()};
    be_->intt(xs, {}, src);
  });
  expect_error("ntt", [&] {
    const PolyRef two[] = {x.slice(0, 1), x.slice(1, 1)};
    const ConstPolyRef src[] = {x.slice(0, 1), x.slice(0, 1)};  // src[1] overlaps polys[0]
    be_->ntt(two, {}, src);
  });
  // Polys overlapping each other.
  expect_error("ntt", [&] {
    const PolyRef two[] = {x.slice(0, 2), x.slice(1, 2)};
    be_->ntt(two);
  });
  // An input copy overlapping a poly or its src.
  expect_error("intt", [&] {
    const PolyRef input_copy[] = {x.ref()};
    be_->intt(xs, {}, {}, input_copy);
  });
  expect_error("ntt", [&] {
    const ConstPolyRef src[] = {y.cref()};
    const PolyRef input_copy[] = {y.ref()};
    be_->ntt(xs, {}, src, input_copy);
  });
  // Per-poly constants of the wrong count, shared constants over different bases.
  expect_error("ntt", [&] {
    const PolyRef mixed[] = {x.ref(), z.ref()};
    be_->ntt(mixed, std::vector<u32>(4, 1));
  });
  expect_error("intt", [&] {
    const PolyRef mixed[] = {x.ref(), z.ref()};
    be_->intt(mixed, std::vector<u32>(3, 1));
  });
  // Epilogue: window out of range, a of the wrong basis, a overlapping a poly, wrong s count.
  const std::vector<u32> ones2(2, 1);
  expect_error("ntt_sub_mul_scalar", [&] {
    const ConstPolyRef a[] = {z.cref()};
    be_->ntt_sub_mul_scalar(xs, {}, a, 2, ones2);
  });
  expect_error("ntt_sub_mul_scalar", [&] {
    const ConstPolyRef a[] = {z.cref()};  // basis {0, 1}, window {1, 2}
    be_->ntt_sub_mul_scalar(xs, {}, a, 1, ones2);
  });
  expect_error("ntt_sub_mul_scalar", [&] {
    const ConstPolyRef a[] = {x.slice(0, 2)};
    be_->ntt_sub_mul_scalar(xs, {}, a, 0, ones2);
  });
  expect_error("ntt_sub_mul_scalar", [&] {
    const ConstPolyRef a[] = {z.cref()};
    be_->ntt_sub_mul_scalar(xs, {}, a, 0, std::vector<u32>(3, 1));
  });
  expect_error("ntt_sub_mul_scalar", [&] {
    const ConstPolyRef a[] = {z.cref(), z.cref()};
    be_->ntt_sub_mul_scalar(xs, {}, a, 0, ones2);
  });
}

}  // namespace
}  // namespace theo::test
