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

// bfloat16 and float16 hold 16-bit floats (the operands of mixed-precision matmuls and
// convolutions, see mixed_precision.hpp); read them with to_vector() or cast them with
// Backend::cast, as there is no C++ element type for data<T>().
enum class DType : std::uint8_t { float32, int32, int64, uint8, bfloat16, float16 };
std::size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);
// bfloat16 or float16: the 16-bit float dtypes mixed precision computes in.
inline bool is_low_precision(DType dtype) { return dtype == DType::bfloat16 || dtype == DType::float16; }
// float32, bfloat16 or float16: the dtypes Backend::cast converts between.
inline bool is_float(DType dtype) { return dtype == DType::float32 || is_low_precision(dtype); }

using Shape = std::vector<std::int64_t>;
std::string shape_str(const Shape& shape);     // "(None, 28, 28, 1)" style: only -1 (unknown) prints as None
std::int64_t shape_numel(const Shape& shape);  // throws ValueError when the product overflows int64

struct Device {
  enum class Kind : std::uint8_t { cpu, gpu };
  Kind kind = Kind::cpu;
  int index = 0;
  std::string str() const;                       // "cpu:0", "gpu:1"
  static Device parse(const std::string& name);  // accepts "cpu", "cpu:1", "gpu:0", "/gpu:0"
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// The device new tensors are placed on when none is named: cpu:0, except inside a DeviceScope
// (a GPU replica's thread runs its whole step inside one, so layers allocate on its GPU).
Device default_device();
class DeviceScope {
 public:
  explicit DeviceScope(Device device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  Device previous_;
};

// Raw bytes owned by one allocation. Tensors point into it with an offset so that
// slicing a batch into per-replica shards never copies.
struct Storage {
  void* data = nullptr;
  std::size_t nbytes = 0;
  Device device;
  Storage(std::size_t nbytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

class Tensor {
 public:
  Tensor() = default;
  // Allocates uninitialised memory (use zeros()/full() for defined contents).
  explicit Tensor(Shape shape, DType dtype = DType::float32, Device device = default_device());

  static Tensor zeros(Shape shape, DType dtype = DType::float32, Device device = default_device());
  static Tensor full(Shape shape, float value);  // on the host
  // On the host; move them with to().
  static Tensor from_vector(Shape shape, const std::vector<float>& values);
  static Tensor from_vector(Shape shape, const std::vector<std::int32_t>& values);
  static Tensor from_vector(Shape shape, const std::vector<std::int64_t>& values);
  static Tensor from_vector(Shape shape, const std::vector<std::uint8_t>& values);
  // Literals, which would be ambiguous between the vectors above: `from_vector({2}, {0.5f, 1.5f})`
  // and `{0.5, 1.5}` make float32, `{1, 2}` int32 (as numpy makes integers from integer literals).
  static Tensor from_vector(Shape shape, std::initializer_list<float> values);
  static Tensor from_vector(Shape shape, std::initializer_list<double> values);
  static Tensor from_vector(Shape shape, std::initializer_list<int> values);

  bool defined() const { return static_cast<bool>(storage_); }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t dim(int axis) const;  // negative axis counts from the end
  std::int64_t numel() const { return shape_numel(shape_); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device : Device{}; }
  bool on_host() const { return device().kind == Device::Kind::cpu; }

  // Every accessor of the contents throws StateError on a default-constructed (empty) tensor.
  void* raw() {
    require_defined("raw");
    return static_cast<char*>(storage_->data) + offset_;
  }
  const void* raw() const {
    require_defined("raw");
    return static_cast<const char*>(storage_->data) + offset_;
  }
  template <class T>
  T* data();  // checks that T matches dtype()
  template <class T>
  const T* data() const;
  // data()/raw() of a GPU tensor are device pointers, for backends only; host code uses these:
  std::vector<float> to_vector() const;  // any dtype converted to float (for tests and logs)
  Tensor to(Device device) const;        // a copy on `device`; *this when already there (or empty)

  Tensor reshape(Shape shape) const;                         // shares storage; -1 infers one dim
  Tensor slice(std::int64_t begin, std::int64_t end) const;  // rows [begin, end) of axis 0, shared
  Tensor clone() const;                                      // a deep copy on the same device (empty: empty)
  void copy_from(const Tensor& src);                         // same shape and dtype required; devices may differ
  void fill(float value);
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

template <class T>
struct dtype_of;
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

// Printing, for logs and test failures. A Shape prints as "(2, 3)". A tensor prints its values
// like numpy (rows of a 2-D tensor on their own lines; more than 1000 elements elided to the
// first and last 3 of each axis), then its shape and dtype: "Tensor([0.5, 1.5], shape=(2,),
// dtype=float32)"; a GPU tensor is copied to the host for it; an empty one prints
// "Tensor(undefined)". Shape is a std::vector, so outside namespace kerascpp these are found with
// `using kerascpp::operator<<;` (Tensor's by argument-dependent lookup).
std::ostream& operator<<(std::ostream& os, const Shape& shape);
std::ostream& operator<<(std::ostream& os, const Tensor& tensor);
std::ostream& operator<<(std::ostream& os, DType dtype);
std::ostream& operator<<(std::ostream& os, const Device& device);

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
