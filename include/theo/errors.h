#pragma once
// Exception types. Every error the library raises on bad input is one of these, with a message
// that names the offending field, level, scale, key or context.

#include <stdexcept>
#include <string>

namespace theo {

// Base of every theodosian exception.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A parameter set, parameter file or argument is invalid. The message names the field.
class ParameterError : public Error {
 public:
  using Error::Error;
};

// Parameter set is below 128-bit security and the caller did not opt in.
class SecurityError : public ParameterError {
 public:
  using ParameterError::ParameterError;
};

// Operands are at incompatible or exhausted levels (e.g. rescale at level 0).
class LevelError : public Error {
 public:
  using Error::Error;
};

// Operand scales differ beyond tolerance.
class ScaleError : public Error {
 public:
  using Error::Error;
};

// A required rotation / relinearization / conjugation key is missing.
class MissingKeyError : public Error {
 public:
  using Error::Error;
};

// Objects from two different Contexts were mixed, or an object is empty / moved-from.
class ContextError : public Error {
 public:
  using Error::Error;
};

// Device or host allocation failed. The message says how much was asked and how much is free.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call or kernel launch failed.
class BackendError : public Error {
 public:
  using Error::Error;
};

}  // namespace theo
