// Tensor: an n-dimensional array with a dtype, a device tag and shared, aligned storage.
// Copies of a Tensor share storage (like a shared_ptr); clone() makes a deep copy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/error.hpp"

namespace kerascpp {

/// A tensor's element type. bfloat16 and float16 hold 16-bit floats (the operands of
/// mixed-precision matmuls and convolutions, see mixed_precision.hpp); read them with to_vector()
/// or cast them with Backend::cast, as there is no C++ element type for data<T>().
enum class DType : std::uint8_t { float32, int32, int64, uint8, bfloat16, float16 };
/// Bytes per element of `dtype` (2 for the 16-bit floats).
std::size_t dtype_size(DType dtype);
/// Keras' name of `dtype`: "float32", "bfloat16", ...
const char* dtype_name(DType dtype);
/// bfloat16 or float16: the 16-bit float dtypes mixed precision computes in.
inline bool is_low_precision(DType dtype) { return dtype == DType::bfloat16 || dtype == DType::float16; }
/// float32, bfloat16 or float16: the dtypes Backend::cast converts between.
inline bool is_float(DType dtype) { return dtype == DType::float32 || is_low_precision(dtype); }

/// Dimensions of a tensor; -1 marks a dimension not known yet (Keras' None, e.g. the batch).
using Shape = std::vector<std::int64_t>;
std::string shape_str(const Shape& shape);     ///< "(None, 28, 28, 1)" style: only -1 (unknown) prints as None
std::int64_t shape_numel(const Shape& shape);  ///< throws ValueError when the product overflows int64

/// Where a tensor's memory lives: a CPU or one GPU by index.
struct Device {
  /// The kind of processor.
  enum class Kind : std::uint8_t { cpu, gpu };
  Kind kind = Kind::cpu;                         ///< CPU or GPU
  int index = 0;                                 ///< which one of its kind, from 0
  std::string str() const;                       ///< "cpu:0", "gpu:1"
  static Device parse(const std::string& name);  ///< accepts "cpu", "cpu:1", "gpu:0", "/gpu:0"
  /// Same kind and index.
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  /// Different kind or index.
  bool operator!=(const Device& o) const { return !(*this == o); }
};

/// The device new tensors are placed on when none is named: cpu:0, except inside a DeviceScope
/// (a GPU replica's thread runs its whole step inside one, so layers allocate on its GPU).
Device default_device();
/// Makes `device` this thread's default_device() until the scope ends (then the previous one).
class DeviceScope {
 public:
  /// Makes `device` the default from now on.
  explicit DeviceScope(Device device);
  /// Restores the previous default device.
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device previous_;
};

/// Raw bytes owned by one allocation. Tensors point into it with an offset so that
/// slicing a batch into per-replica shards never copies.
struct Storage {
  void* data = nullptr;    ///< host or device pointer, aligned for any dtype
  std::size_t nbytes = 0;  ///< size of the allocation
  Device device;           ///< where `data` points
  /// Allocates `nbytes` uninitialised bytes on `device`.
  Storage(std::size_t nbytes, Device device);
  /// Frees the allocation.
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

/// An n-dimensional array with a dtype and a device. Copies share storage (like a shared_ptr);
/// clone() makes a deep copy.
class Tensor {
 public:
  /// An empty (undefined) tensor: defined() is false and reading its contents throws StateError.
  Tensor() = default;
  /// Allocates uninitialised memory (use zeros()/full() for defined contents).
  explicit Tensor(Shape shape, DType dtype = DType::float32, Device device = default_device());

  /// A tensor of zeros.
  static Tensor zeros(Shape shape, DType dtype = DType::float32, Device device = default_device());
  static Tensor full(Shape shape, float value);  ///< float32 filled with `value`, on the host
  /// @{
  /// A host tensor holding a copy of `values` (row-major), with their dtype; move it with to().
  static Tensor from_vector(Shape shape, const std::vector<float>& values);
  static Tensor from_vector(Shape shape, const std::vector<std::int32_t>& values);
  static Tensor from_vector(Shape shape, const std::vector<std::int64_t>& values);
  static Tensor from_vector(Shape shape, const std::vector<std::uint8_t>& values);
  /// @}
  /// @{
  /// Literals, which would be ambiguous between the vectors above: `from_vector({2}, {0.5f, 1.5f})`
  /// and `{0.5, 1.5}` make float32, `{1, 2}` int32 (as numpy makes integers from integer literals).
  static Tensor from_vector(Shape shape, std::initializer_list<float> values);
  static Tensor from_vector(Shape shape, std::initializer_list<double> values);
  static Tensor from_vector(Shape shape, std::initializer_list<int> values);
  /// @}

  /// False for a default-constructed tensor, which has no storage.
  bool defined() const { return static_cast<bool>(storage_); }
  /// The dimensions; () for a scalar.
  const Shape& shape() const { return shape_; }
  /// The number of dimensions.
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t dim(int axis) const;  ///< negative axis counts from the end
  /// The number of elements (1 for a scalar).
  std::int64_t numel() const { return shape_numel(shape_); }
  /// The size of the contents in bytes.
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  /// The element type.
  DType dtype() const { return dtype_; }
  /// Where the contents live (cpu:0 for an empty tensor).
  Device device() const { return storage_ ? storage_->device : Device{}; }
  /// True when the contents are in host memory.
  bool on_host() const { return device().kind == Device::Kind::cpu; }

  /// @{
  /// The first element's address (a device pointer for a GPU tensor). Every accessor of the
  /// contents throws StateError on a default-constructed (empty) tensor.
  void* raw() {
    require_defined("raw");
    return static_cast<char*>(storage_->data) + offset_;
  }
  const void* raw() const {
    require_defined("raw");
    return static_cast<const char*>(storage_->data) + offset_;
  }
  /// @}
  /// @{
  /// The contents as T, which must match dtype() (else ShapeError).
  template <class T>
  T* data();
  template <class T>
  const T* data() const;
  /// @}
  // data()/raw() of a GPU tensor are device pointers, for backends only; host code uses these:
  std::vector<float> to_vector() const;  ///< any dtype converted to float (for tests and logs)
  Tensor to(Device device) const;        ///< a copy on `device`; *this when already there (or empty)

  Tensor reshape(Shape shape) const;                         ///< shares storage; -1 infers one dim
  Tensor slice(std::int64_t begin, std::int64_t end) const;  ///< rows [begin, end) of axis 0, shared
  Tensor clone() const;                                      ///< a deep copy on the same device (empty: empty)
  void copy_from(const Tensor& src);                         ///< same shape and dtype required; devices may differ
  /// Sets every element to `value` (converted to dtype()).
  void fill(float value);
  /// True when both tensors view the same allocation (copies, reshapes and slices of each other).
  bool same_storage(const Tensor& other) const { return storage_ == other.storage_; }

 private:
  // A default-constructed Tensor has no storage but the scalar shape (), so numel() is 1; without
  // this check reading it would dereference a null storage.
  void require_defined(const char* op) const {
    if (!storage_) throw_empty(op);
  }
  [[noreturn]] static void throw_empty(const char* op);

  std::shared_ptr<Storage> storage_;
  std::size_t offset_ = 0;
  Shape shape_;
  DType dtype_ = DType::float32;
};

/// The DType of the C++ element type T (float, int32, int64, uint8) as `value`.
template <class T>
struct dtype_of;
/// @cond
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::float32;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr DType value = DType::int32;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<std::uint8_t> {
  static constexpr DType value = DType::uint8;
};
/// @endcond

/// @{
/// Printing, for logs and test failures. A Shape prints as "(2, 3)". A tensor prints its values
/// like numpy (rows of a 2-D tensor on their own lines; more than 1000 elements elided to the
/// first and last 3 of each axis), then its shape and dtype: "Tensor([0.5, 1.5], shape=(2,),
/// dtype=float32)"; a GPU tensor is copied to the host for it; an empty one prints
/// "Tensor(undefined)". Shape is a std::vector, so outside namespace kerascpp these are found with
/// `using kerascpp::operator<<;` (Tensor's by argument-dependent lookup).
std::ostream& operator<<(std::ostream& os, const Shape& shape);
std::ostream& operator<<(std::ostream& os, const Tensor& tensor);
std::ostream& operator<<(std::ostream& os, DType dtype);
std::ostream& operator<<(std::ostream& os, const Device& device);
/// @}

template <class T>
T* Tensor::data() {
  require_defined("data");
  if (dtype_of<T>::value != dtype_)
    throw ShapeError(std::string("Tensor::data: tensor holds ") + dtype_name(dtype_) + ", requested " +
                     dtype_name(dtype_of<T>::value) + "; convert the tensor first");
  return static_cast<T*>(raw());
}
template <class T>
const T* Tensor::data() const {
  return const_cast<Tensor*>(this)->data<T>();
}

}  // namespace kerascpp
