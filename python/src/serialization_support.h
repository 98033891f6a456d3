#pragma once
// theodosian._core, serialization: what the serialization bindings read and write through (Python
// byte buffers and file objects as C++ streams), the progress bar of long saves and loads, the
// attaching of methods to classes bound elsewhere, and the translation of library messages into
// Python terms (serialization_messages.cpp).

#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <span>
#include <streambuf>
#include <string>
#include <vector>

#include "bindings.h"

namespace theopy {

// ---- bytes, files and streams
// --------------------------------------------------------------------

// A contiguous read-only view of any buffer-protocol object (bytes, bytearray, memoryview, numpy).
class ByteView {
 public:
  explicit ByteView(nb::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      throw nb::type_error("data must be bytes, bytearray, memoryview or another buffer of bytes");
    }
  }
  ~ByteView() { PyBuffer_Release(&view_); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;
  std::span<const std::uint8_t> span() const {
    return {static_cast<const std::uint8_t*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

// A Python binary file object as a std::streambuf (1 MiB buffer). The C++ side runs without the
// GIL; every call into the file takes it. A Python exception from the file is kept and re-raised
// once the C++ call returns.
class PyFileBuf : public std::streambuf {
 public:
  PyFileBuf(nb::handle file, bool writing) : file_(nb::borrow(file)), buf_(kBufBytes) {
    if (writing) {
      setp(buf_.data(), buf_.data() + buf_.size());
    } else {
      setg(buf_.data(), buf_.data(), buf_.data());
    }
    try {
      seekable_ = nb::cast<bool>(file_.attr("seekable")());
    } catch (const nb::python_error&) {
      seekable_ = false;
    }
  }
  ~PyFileBuf() override {
    nb::gil_scoped_acquire gil;
    file_.reset();
  }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  int sync() override { return flush_out() ? 0 : -1; }

  int_type overflow(int_type c) override {
    if (!flush_out()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }

  // Reads go straight to the file, exactly as many bytes as asked: nothing is read ahead, so the
  // file is left right after the object (several objects may follow each other in one file).
  std::streamsize xsgetn(char* dst, std::streamsize n) override {
    std::streamsize done = std::min<std::streamsize>(n, egptr() - gptr());
    if (done > 0) {
      std::memcpy(dst, gptr(), static_cast<std::size_t>(done));
      gbump(static_cast<int>(done));
    }
    try {
      nb::gil_scoped_acquire gil;
      while (done < n) {
        const auto want = static_cast<std::size_t>(n - done);
        nb::object data = file_.attr("read")(want);
        ByteView v(data);
        const std::size_t got = v.span().size();
        if (got == 0) break;
        if (got > want) throw nb::value_error("file.read returned more bytes than asked");
        std::memcpy(dst + done, v.span().data(), got);
        done += static_cast<std::streamsize>(got);
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    return done;
  }
  int_type underflow() override {
    char c = 0;
    if (xsgetn(&c, 1) != 1) return traits_type::eof();
    // One byte of lookahead: keep it in the get area.
    buf_[0] = c;
    setg(buf_.data(), buf_.data(), buf_.data() + 1);
    return traits_type::to_int_type(c);
  }

  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    if (!seekable_ || pbase() != nullptr) return pos_type(off_type(-1));
    try {
      nb::gil_scoped_acquire gil;
      const auto buffered = static_cast<off_type>(egptr() - gptr());
      const auto tell = nb::cast<off_type>(file_.attr("tell")());
      off_type to = 0;
      if (dir == std::ios_base::cur) {
        to = tell - buffered + off;
        if (off == 0) return pos_type(to);
      } else if (dir == std::ios_base::beg) {
        to = off;
      } else {
        to = nb::cast<off_type>(file_.attr("seek")(0, 2)) + off;
      }
      if (to < 0) return pos_type(off_type(-1));
      file_.attr("seek")(to);
      setg(buf_.data(), buf_.data(), buf_.data());
      return pos_type(to);
    } catch (...) {
      error_ = std::current_exception();
      return pos_type(off_type(-1));
    }
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode mode) override {
    return seekoff(off_type(pos), std::ios_base::beg, mode);
  }

 private:
  static constexpr std::size_t kBufBytes = std::size_t{1} << 20;
  bool flush_out() {
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    if (n == 0) return true;
    try {
      nb::gil_scoped_acquire gil;
      std::size_t done = 0;
      while (done < n) {
        nb::object rest = nb::steal(PyMemoryView_FromMemory(
            buf_.data() + done, static_cast<Py_ssize_t>(n - done), PyBUF_READ));
        if (!rest.is_valid()) throw nb::python_error();
        nb::object w = file_.attr("write")(rest);
        // Raw files may write less than asked (and return None when nothing could be written).
        if (w.is_none()) throw nb::value_error("file.write wrote nothing (non-blocking file?)");
        done += nb::cast<std::size_t>(w);
      }
    } catch (...) {
      error_ = std::current_exception();
      return false;
    }
    setp(buf_.data(), buf_.data() + buf_.size());
    return true;
  }

  nb::object file_;
  std::vector<char> buf_;
  bool seekable_ = false;
  std::exception_ptr error_;
};

inline bool is_path(nb::handle target) {
  return nb::isinstance<nb::str>(target) || nb::hasattr(target, "__fspath__");
}
inline std::filesystem::path to_path(nb::handle target) {
  return nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(target));
}

// ---- progress ----------------------------------------------------------------------------------

// A progress bar through theodosian._progress (tqdm when installed) for saves and loads: on when
// asked, or by default for objects of 256 MiB and more when stderr is a terminal. Ctrl-C
// interrupts between sections.
class PyProgress {
 public:
  PyProgress(std::optional<bool> want, std::string desc) : want_(want), desc_(std::move(desc)) {}
  ~PyProgress() {
    if (bar_.is_valid() && !bar_.is_none()) {
      try {
        bar_.attr("close")();
      } catch (...) {  // never mask the operation's own result
      }
    }
  }
  theo::ProgressCallback callback() {
    if (want_.has_value() && !*want_) return {};
    return [this](theo::u64 done, theo::u64 total) {
      nb::gil_scoped_acquire gil;
      if (!bar_.is_valid()) {
        bool show = want_.value_or(false);
        if (!want_.has_value() && total >= (theo::u64{256} << 20)) {
          nb::object err = nb::module_::import_("sys").attr("stderr");
          try {
            show = !err.is_none() && nb::cast<bool>(err.attr("isatty")());
          } catch (const nb::python_error&) {
            show = false;
          }
        }
        bar_ = show ? nb::module_::import_("theodosian._progress")
                          .attr("make_bar")(total, desc_, "unit"_a = "B")
                    : nb::none();
      }
      if (!bar_.is_none()) bar_.attr("update")(done - last_);
      last_ = done;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
    };
  }

 private:
  std::optional<bool> want_;
  std::string desc_;
  nb::object bar_;
  theo::u64 last_ = 0;
};

inline theo::LoadOptions load_options(std::optional<theo::u64> max_bytes) {
  theo::LoadOptions o;
  if (max_bytes) o.max_bytes = *max_bytes;
  return o;
}

// ---- attaching methods to the bound classes ----------------------------------------------------

template <typename W, typename F, typename... Extra>
void method(const char* name, F&& f, const Extra&... extra) {
  nb::handle cls = nb::type<W>();
  nb::cpp_function_def<W>(std::forward<F>(f), nb::scope(cls), nb::name(name), nb::is_method(),
                          extra...);
}

template <typename W, typename F, typename... Extra>
void static_method(const char* name, F&& f, const Extra&... extra) {
  nb::handle cls = nb::type<W>();
  nb::cpp_function_def(std::forward<F>(f), nb::scope(cls), nb::name(name), extra...);
}

template <typename W, typename F>
void property(const char* name, F&& getter, const char* doc) {
  nb::handle cls = nb::type<W>();
  nb::object get = nb::cpp_function<W>(std::forward<F>(getter), nb::is_method(), nb::is_getter());
  nb::object prop =
      nb::module_::import_("builtins").attr("property")(get, nb::none(), nb::none(), doc);
  nb::setattr(cls, name, prop);
}

// Attaches HostCiphertext and Ciphertext.to_host (host_ciphertext_bindings.cpp).
void bind_host_ciphertext(nb::module_& m);

// Registers the translation of library exceptions whose messages name C++ calls into Python
// exceptions that name the Python calls (serialization_messages.cpp).
void register_message_translator();

}  // namespace theopy
