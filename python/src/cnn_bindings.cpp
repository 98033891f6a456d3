// theodosian._core, encrypted CNNs: the multiplexed tensor layout and the layer slot matrices
// (include/theo/circuits/cnn.h), and encrypted ResNet inference (include/theo/workloads/resnet.h).

#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>

#include <functional>

#include "bindings.h"
#include "theo/circuits/cnn.h"
#include "theo/workloads/resnet.h"

namespace theopy {
namespace {

std::vector<double> to_real_vector(nb::handle obj, const char* what) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("ascontiguousarray")(np.attr("asarray")(obj, "dtype"_a = "float64"));
  a = a.attr("reshape")(-1);
  auto arr = nb::cast<nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(a);
  (void)what;
  return {arr.data(), arr.data() + arr.shape(0)};
}

theo::Conv2dWeights conv_from(nb::handle weight, nb::handle bias, u32 stride) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object w = np.attr("asarray")(weight, "dtype"_a = "float64");
  if (nb::cast<std::size_t>(w.attr("ndim")) != 4) {
    throw theo::ParameterError("conv weight must have 4 dimensions [out, in, k, k]");
  }
  nb::tuple shape = nb::borrow<nb::tuple>(w.attr("shape"));
  theo::Conv2dWeights c;
  c.out_channels = nb::cast<u32>(shape[0]);
  c.in_channels = nb::cast<u32>(shape[1]);
  c.kernel = nb::cast<u32>(shape[2]);
  if (nb::cast<u32>(shape[3]) != c.kernel) throw theo::ParameterError("conv kernel not square");
  c.stride = stride;
  c.weight = to_real_vector(w, "weight");
  if (!bias.is_none()) c.bias = to_real_vector(bias, "bias");
  c.validate("conv");
  return c;
}

struct WCnnLinearLayer {
  SessionPtr s;
  std::unique_ptr<theo::CnnLinearLayer> layer;
};

struct WResNetKeys {
  SessionPtr s;
  std::shared_ptr<const theo::BootstrappingKeys> k;
};

struct WResNetInference {
  SessionPtr s;
  std::unique_ptr<theo::Bootstrapper> boot;  // null: the parameters hold the whole network
  std::unique_ptr<theo::ResNetInference> net;
};

}  // namespace

void bind_cnn(nb::module_& m) {
  // ---- layout ------------------------------------------------------------------------------
  nb::class_<theo::TensorLayout>(
      m, "TensorLayout",
      "Where a C x H x W tensor lives in the slots of one ciphertext: the multiplexed packing of "
      "Lee et al. (ICML 2022). Element (c, y, x) at (c // k^2) * block + (k y + a) * row + k x + "
      "b with a k + b = c mod k^2 (k = gap); the data repeats every `period` slots.")
      .def_static("dense", &theo::TensorLayout::dense, "channels"_a, "height"_a, "width"_a,
                  "slots"_a, "Gap 1, row = next power of two >= width.")
      .def("strided", &theo::TensorLayout::strided, "stride"_a, "out_channels"_a,
           "The layout a stride-s layer with out_channels produces (gap * s, H / s, W / s).")
      .def("slot", &theo::TensorLayout::slot, "c"_a, "y"_a, "x"_a, "Slot of element (c, y, x).")
      .def(
          "pack",
          [](const theo::TensorLayout& l, nb::handle chw) {
            return to_numpy(l.pack(to_real_vector(chw, "tensor")));
          },
          "tensor"_a, "A C x H x W tensor -> slot vector (float64, replicated every period).")
      .def(
          "unpack",
          [](const theo::TensorLayout& l, nb::handle slots) {
            nb::module_ np = nb::module_::import_("numpy");
            nb::object flat = to_numpy(l.unpack(to_real_vector(slots, "slots")));
            return flat.attr("reshape")(l.channels, l.height, l.width);
          },
          "slots"_a, "Slot vector -> C x H x W tensor (the first copy).")
      .def_ro("channels", &theo::TensorLayout::channels)
      .def_ro("height", &theo::TensorLayout::height)
      .def_ro("width", &theo::TensorLayout::width)
      .def_ro("gap", &theo::TensorLayout::gap)
      .def_ro("row", &theo::TensorLayout::row)
      .def_ro("slots", &theo::TensorLayout::slots)
      .def_ro("period", &theo::TensorLayout::period)
      .def_prop_ro("span", &theo::TensorLayout::span, "Slots the data occupies in one period.")
      .def("__repr__",
           [](const theo::TensorLayout& l) { return "TensorLayout(" + l.describe() + ")"; });

  // ---- layer matrices ----------------------------------------------------------------------
  m.def("linear_output_period", &theo::linear_output_period, "input"_a, "output"_a,
        "Period of the output of the layer matrices: max(input.period, output.period).");
  m.def(
      "conv2d_matrix",
      [](const theo::TensorLayout& in, const theo::TensorLayout& out, nb::handle weight, u32 stride,
         double scale) {
        const theo::Conv2dWeights c = conv_from(weight, nb::none(), stride);
        nb::gil_scoped_release release;
        return theo::conv2d_matrix(in, out, c, scale);
      },
      "input"_a, "output"_a, "weight"_a, "stride"_a = 1u, "scale"_a = 1.0,
      "Slot matrix (DiagonalMatrix) of a 'same'-padded convolution, weight [out, in, k, k] "
      "times scale, from layout `input` to `output` = input.strided(stride, out).");
  m.def(
      "conv2d_bias",
      [](const theo::TensorLayout& in, const theo::TensorLayout& out, nb::handle weight,
         nb::handle bias, u32 stride, double input_offset, double shift, double scale) {
        const theo::Conv2dWeights c = conv_from(weight, bias, stride);
        return to_numpy(theo::conv2d_bias(in, out, c, input_offset, shift, scale));
      },
      "input"_a, "output"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1u,
      "input_offset"_a = 0.0, "shift"_a = 0.0, "scale"_a = 1.0,
      "Per-slot bias scale * (conv(input_offset) + bias + shift) of that convolution's output "
      "(zero padding stays zero).");
  m.def("shortcut_matrix", &theo::shortcut_matrix, "input"_a, "output"_a, "weight"_a = 1.0,
        "ResNet option-A shortcut: subsample, zero new channels, times weight.");
  m.def(
      "pooled_fc_matrix",
      [](const theo::TensorLayout& l, u32 outputs, nb::handle weight, double scale) {
        return theo::pooled_fc_matrix(l, outputs, to_real_vector(weight, "weight"), scale);
      },
      "layout"_a, "outputs"_a, "weight"_a, "scale"_a = 1.0,
      "Fully connected layer [outputs, channels] on the spatial sums (after spatial_sum): "
      "output j at fc_output_slot(layout, j).");
  m.def("fc_output_slot", &theo::fc_output_slot, "layout"_a, "j"_a);
  m.def("spatial_sum_rotations", &theo::spatial_sum_rotations, "layout"_a,
        "Rotations spatial_sum needs keys for.");
  m.def(
      "spatial_sum",
      [](const WCiphertext& ct, const theo::TensorLayout& l, const WGaloisKeys* gk) {
        const auto keys = pick_galois(ct.s, nullptr, gk, "spatial_sum");
        return run_ct(ct.s, ct.real,
                      [&] { return theo::spatial_sum(ct.s->evaluator, ct.ct, l, *keys); });
      },
      "ciphertext"_a, "layout"_a, "galois_keys"_a = nb::none(),
      "Rotate-and-sum over the spatial grid (no level): slot(c, 0, 0) holds channel c's sum.");

  nb::class_<WCnnLinearLayer>(
      m, "CnnLinearLayer",
      "A linear layer on one ciphertext: slot matrix (BSGS, one level) + per-slot bias + "
      "rotations replicating the output down to output.period.")
      .def(
          "__init__",
          [](WCnnLinearLayer* self, const WContext& ctx, const theo::DiagonalMatrix& matrix,
             nb::handle bias, u32 level, u32 computed_period, const theo::TensorLayout& out,
             bool min_keys) {
            std::vector<double> b;
            if (!bias.is_none()) b = to_real_vector(bias, "bias");
            std::unique_ptr<theo::CnnLinearLayer> l;
            {
              nb::gil_scoped_release release;
              l = std::make_unique<theo::CnnLinearLayer>(
                  ctx.s->encoder, matrix, b, level, computed_period, out,
                  theo::LinearTransformOptions{0, min_keys, std::nullopt});
            }
            new (self) WCnnLinearLayer{ctx.s, std::move(l)};
          },
          "context"_a, "matrix"_a, "bias"_a, "level"_a, "computed_period"_a, "output"_a,
          "min_keys"_a = false, "Encodes the matrix at `level` (output at level - 1) and the bias.")
      .def(
          "apply",
          [](const WCnnLinearLayer& l, const WCiphertext& ct, const WGaloisKeys* gk) {
            const auto keys = pick_galois(l.s, nullptr, gk, "CnnLinearLayer.apply");
            return run_ct(l.s, ct.real,
                          [&] { return l.layer->apply(l.s->evaluator, ct.ct, *keys); });
          },
          "ciphertext"_a, "galois_keys"_a = nb::none(), "The layer on an encrypted tensor.")
      .def(
          "rotations", [](const WCnnLinearLayer& l) { return l.layer->rotations(); },
          "Left rotations apply() needs keys for.")
      .def_prop_ro("diagonals", [](const WCnnLinearLayer& l) { return l.layer->diagonals(); })
      .def_prop_ro("key_switches", [](const WCnnLinearLayer& l) { return l.layer->key_switches(); })
      .def_prop_ro("level", [](const WCnnLinearLayer& l) { return l.layer->level(); });

  // ---- ResNet ------------------------------------------------------------------------------
  nb::class_<theo::ResNetModel>(
      m, "ResNetModel",
      "A CIFAR-style ResNet with a quadratic activation, as written by theodosian.cnn (the "
      "plaintext side, training included).")
      .def_static(
          "load",
          [](const std::filesystem::path& p) { return theo::ResNetModel::load(p.string()); },
          "path"_a, "Reads and validates a model file (ParameterError naming what is wrong).")
      .def_static(
          "random",
          [](u32 channels, u32 image, std::vector<u32> widths, u32 blocks, u32 classes, u64 seed,
             bool relu) {
            return theo::ResNetModel::random(channels, image, std::move(widths), blocks, classes,
                                             seed,
                                             relu ? theo::ResNetModel::Activation::kRelu
                                                  : theo::ResNetModel::Activation::kQuadratic);
          },
          "channels"_a, "image"_a, "widths"_a, "blocks"_a, "classes"_a, "seed"_a, "relu"_a = false,
          "Random weights (tests), calibrated; relu: a ReLU network.")
      .def(
          "logits",
          [](const theo::ResNetModel& mdl, nb::handle image) {
            const std::vector<double> img = to_real_vector(image, "image");
            std::vector<double> out;
            {
              nb::gil_scoped_release release;
              out = mdl.logits(img);
            }
            return to_numpy(std::move(out));
          },
          "image"_a, "Plaintext reference logits (float64) of one C x H x W image.")
      .def("validate", &theo::ResNetModel::validate)
      .def_ro("channels", &theo::ResNetModel::channels)
      .def_ro("image", &theo::ResNetModel::image)
      .def_ro("widths", &theo::ResNetModel::widths)
      .def_ro("blocks_per_stage", &theo::ResNetModel::blocks_per_stage)
      .def_ro("classes", &theo::ResNetModel::classes)
      .def_prop_ro(
          "activation_kind",
          [](const theo::ResNetModel& mdl) {
            return mdl.activation == theo::ResNetModel::Activation::kRelu ? "relu" : "quadratic";
          },
          "'relu' (the papers' network: AppReLU under encryption) or 'quadratic'.")
      .def_ro("activation", &theo::ResNetModel::act)
      .def_ro("activation_interval", &theo::ResNetModel::act_interval)
      .def_ro("activation_max_error", &theo::ResNetModel::act_max_error)
      .def_ro("act_max_inputs", &theo::ResNetModel::act_max_inputs)
      .def(
          "calibrate",
          [](theo::ResNetModel& mdl, nb::handle images) {
            const std::vector<double> flat = to_real_vector(images, "images");
            const std::size_t per = mdl.input_size();
            if (per == 0 || flat.empty() || flat.size() % per != 0) {
              throw theo::ParameterError("ResNetModel.calibrate: images of " + std::to_string(per) +
                                         " values each expected");
            }
            std::vector<std::vector<double>> imgs;
            for (std::size_t i = 0; i < flat.size(); i += per)
              imgs.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(i),
                                flat.begin() + static_cast<std::ptrdiff_t>(i + per));
            nb::gil_scoped_release release;
            mdl.calibrate(imgs);
          },
          "images"_a,
          "Sets act_max_inputs to the max |input| of every activation over `images` (N x C x H x "
          "W, any array-like): the ranges encrypted inference scales by.")
      .def_ro("dataset", &theo::ResNetModel::dataset)
      .def_ro("test_accuracy", &theo::ResNetModel::test_accuracy)
      .def_ro("train_accuracy", &theo::ResNetModel::train_accuracy);

  nb::class_<WResNetKeys>(m, "ResNetKeys",
                          "Relinearization, bootstrapping and layer rotation keys of a "
                          "ResNetInference (ResNetInference.generate_keys).");

  nb::class_<WResNetInference>(
      m, "ResNetInference",
      "Encrypted inference of a ResNetModel on one ciphertext per image: multiplexed "
      "convolutions, one level per quadratic activation, bootstrapping placed by the level "
      "planner. Compiling validates everything (model, depth) before any encryption work.")
      .def(
          "__init__",
          [](WResNetInference* self, const WContext& ctx, const theo::ResNetModel& model,
             bool bootstrap, std::optional<u32> input_level, double margin, bool min_keys,
             std::optional<theo::CompositeSign> sign) {
            std::unique_ptr<theo::Bootstrapper> boot;
            std::unique_ptr<theo::ResNetInference> net;
            {
              nb::gil_scoped_release release;
              if (bootstrap) {
                boot = std::make_unique<theo::Bootstrapper>(
                    ctx.s->ctx, theo::ResNetInference::bootstrap_config(model));
              }
              theo::ResNetOptions o;
              o.margin = margin;
              o.min_keys = min_keys;
              o.sign = std::move(sign);
              net = std::make_unique<theo::ResNetInference>(ctx.s->ctx, model, boot.get(),
                                                            input_level, o);
            }
            new (self) WResNetInference{ctx.s, std::move(boot), std::move(net)};
          },
          "context"_a, "model"_a, nb::kw_only(), "bootstrap"_a = true, "input_level"_a = nb::none(),
          "margin"_a = 1.25, "min_keys"_a = false, nb::arg("sign").none() = nb::none(),
          "Compiles the model. bootstrap: make a Bootstrapper (the parameter set must be "
          "bootstrappable); False: the parameters must hold the whole network. margin: activation "
          "inputs are scaled to margin x their calibrated range. min_keys: shared power-of-two "
          "rotation keys and weights over Q_l (less memory, slower). sign: the CompositeSign of "
          "a ReLU network's AppReLU (default CompositeSign.alpha13()).")
      .def(
          "reference_logits",
          [](const WResNetInference& n, nb::handle image) {
            const std::vector<double> img = to_real_vector(image, "image");
            std::vector<double> out;
            {
              nb::gil_scoped_release release;
              out = n.net->reference_logits(img);
            }
            return to_numpy(std::move(out));
          },
          "image"_a,
          "The plaintext model with the activation the encrypted network evaluates (the "
          "quadratic, or AppReLU with this network's scales): infer()'s exact reference.")
      .def_prop_ro(
          "activation_name", [](const WResNetInference& n) { return n.net->activation_name(); },
          "'quadratic' or 'appRelu-15-15-27'.")
      .def(
          "generate_keys",
          [](const WResNetInference& n, WKeyGenerator& kg, const WSecretKey& sk, bool progress) {
            auto keys = std::make_shared<theo::BootstrappingKeys>();
            {
              nb::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(kg.mu);
              if (n.boot) {
                *keys = n.boot->generate_keys(*kg.kg, *sk.k, progress);
              } else {
                keys->relin = kg.kg->create_relin_key(*sk.k);
                keys->galois = theo::GaloisKeys(n.s->ctx->id());
              }
              std::vector<u32> gal;
              for (const int r : n.net->rotations()) {
                const u32 g = theo::galois_element_for_rotation(r, n.s->ctx->log_n());
                if (!keys->galois.contains(g)) gal.push_back(g);
              }
              kg.kg->add_galois_keys(*sk.k, gal, keys->galois);
            }
            return WResNetKeys{n.s, std::move(keys)};
          },
          "keygen"_a, "secret_key"_a, "progress"_a = false,
          "Relinearization, bootstrapping and every layer rotation key.")
      .def(
          "encrypt",
          [](const WResNetInference& n, WEncryptor& enc, nb::handle image) {
            const std::vector<double> img = to_real_vector(image, "image");
            return run_ct(n.s, true, [&] {
              std::lock_guard<std::mutex> lock(enc.mu);
              return n.net->encrypt(n.s->encoder, *enc.enc, img);
            });
          },
          "encryptor"_a, "image"_a,
          "Packs one C x H x W image in the input layout and encrypts it (ParameterError on a "
          "wrong shape or a non-finite value, before any encryption).")
      .def(
          "infer",
          [](const WResNetInference& n, const WCiphertext& ct, const WResNetKeys& keys,
             nb::object progress) {
            theo::ResNetInference::Progress cb;
            if (!progress.is_none()) {
              cb = [progress](const std::string& step, u32 done, u32 total) {
                nb::gil_scoped_acquire acquire;
                progress(step, done, total);
              };
            }
            return run_ct(n.s, true,
                          [&] { return n.net->infer(n.s->evaluator, ct.ct, *keys.k, cb); });
          },
          "ciphertext"_a, "keys"_a, "progress"_a = nb::none(),
          "The whole network on an encrypted image; progress(step, done, total) after every "
          "planned step (stem, each block, head).")
      .def(
          "decrypt_logits",
          [](const WResNetInference& n, const WDecryptor& dec, const WCiphertext& ct) {
            std::vector<double> out;
            {
              nb::gil_scoped_release release;
              out = n.net->decrypt_logits(n.s->encoder, *dec.dec, ct.ct);
            }
            return to_numpy(std::move(out));
          },
          "decryptor"_a, "ciphertext"_a, "The logits (float64).")
      .def("rotations", [](const WResNetInference& n) { return n.net->rotations(); })
      .def(
          "describe", [](const WResNetInference& n) { return n.net->describe(); },
          "Layer counts and the level plan.")
      .def_prop_ro("bootstraps",
                   [](const WResNetInference& n) { return n.net->counts().bootstraps; })
      .def_prop_ro("input_level", [](const WResNetInference& n) { return n.net->input_level(); })
      .def_prop_ro(
          "steps",
          [](const WResNetInference& n) {
            std::vector<std::string> s;
            for (const auto& e : n.net->plan().steps)
              s.push_back(e.name);
            return s;
          },
          "Planned steps (the progress callback's names).")
      .def_prop_ro("counts", [](const WResNetInference& n) {
        const theo::ResNetCounts& c = n.net->counts();
        nb::dict d;
        d["bootstraps"] = c.bootstraps;
        d["linear_layers"] = c.linear_layers;
        d["diagonals"] = c.diagonals;
        d["key_switches"] = c.key_switches;
        d["ciphertext_products"] = c.ciphertext_products;
        d["constant_products"] = c.constant_products;
        d["plaintext_bytes"] = c.plaintext_bytes;
        d["rotation_keys"] = c.rotations.size();
        return d;
      });
}

}  // namespace theopy
