// Rich display of kerascpp objects in a Jupyter notebook with a C++ kernel (xeus-cling, xeus-cpp).
//
// Optional and separate from kerascpp.hpp: it is the one public header that needs nlohmann::json,
// the type xeus uses for display bundles. Include it in a notebook cell and a cell ending in a
// Model, Tensor, History, Logs or Dataset shows a table, an image or a chart instead of @0x7f…:
// the kernel finds `mime_bundle_repr(const T&)` by argument-dependent lookup, so each overload
// lives in the namespace of its type. Every bundle has "text/plain" for consoles and nbconvert.
//
// Kernels built on Cling alone (no xeus display, e.g. a plain Cling or ROOT prompt) print a
// value through their own hook instead, `cling::printValue(const T*)`; the overloads at the end
// give the text a terminal would show: summary() for a Model, operator<< for a Tensor and Logs.
//
// The renderers are compiled into libkerascpp (src/notebook/), so a cell JIT-compiles only the
// thin JSON wrappers below; they return plain strings and can be used without a notebook
// (write the SVG or PNG to a file, embed the HTML in a report).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kerascpp/callbacks/callback.hpp"
#include "kerascpp/data/dataset.hpp"
#include "kerascpp/tensor/tensor.hpp"
#include "kerascpp/training/logs.hpp"
#include "kerascpp/training/model.hpp"

#if __has_include(<xcpp/xdisplay.hpp>)
#include <xcpp/xdisplay.hpp>
#include <xeus/xguid.hpp>
#define KERASCPP_NOTEBOOK_XEUS 1
#else
#define KERASCPP_NOTEBOOK_XEUS 0
#endif

/// Rich display of kerascpp objects in Jupyter C++ kernels, and the renderers behind it.
namespace kerascpp::notebook {

// ---- renderers (compiled into the library) ----
/// Model: the layers as summary() lists them (name, class, output shape, params) and the totals.
std::string model_html(const Model& model);
std::string model_text(const Model& model);  ///< summary() as a string
/// @{
/// Tensor: the first max_rows rows (axis 0) and max_cols values of each row (the rest flattened),
/// with its shape and dtype; undefined tensors render as "Tensor(undefined)".
std::string tensor_html(const Tensor& tensor, std::int64_t max_rows = 10, std::int64_t max_cols = 12);
std::string tensor_text(const Tensor& tensor, std::int64_t max_rows = 10, std::int64_t max_cols = 12);
/// @}
/// Image-shaped: float32 or uint8 (H, W), (H, W, 1), (H, W, 3) or (N, H, W, 1) with N > 1 (drawn
/// side by side), H and W at least 16 (a smaller matrix reads better as a table).
bool is_image(const Tensor& tensor);
/// A PNG file's bytes (8-bit grey or RGB). Values are scaled from [min, max] of the tensor to
/// [0, 255] unless they already lie in [0, 1] (scaled by 255) or are uint8 (kept). `scale` > 1
/// repeats each pixel (a 28x28 image is tiny on a screen). Throws ValueError unless is_image().
std::string tensor_png(const Tensor& image, int scale = 1);
/// `bytes` in base64 (for data: URLs).
std::string base64(const std::string& bytes);
/// `text` with `&`, `<`, `>` and `"` escaped for HTML.
std::string html_escape(const std::string& text);
/// Images with captions in a row: images (N, H, W[, 1|3]), one caption per image (may be empty).
std::string image_grid_html(const Tensor& images, const std::vector<std::string>& captions, int scale = 2);
/// History: one chart per metric (loss first), "val_x" drawn with "x", epochs on the x axis.
std::string history_svg(const callbacks::History& history);
/// History as text: "History(loss=[0.5123, 0.4011], ...)", 4 decimals.
std::string history_text(const callbacks::History& history);
/// Logs as an HTML table of name and value.
std::string logs_html(const Logs& logs);
/// Logs as text: "loss: 0.4512 - accuracy: 0.8411" ("Logs()" when empty).
std::string logs_text(const Logs& logs);
/// @{
/// Dataset: its cardinality and element spec (the shapes and dtypes of one element, taken from
/// the first element: peeking runs the pipeline up to it, e.g. fills a shuffle buffer).
std::string dataset_html(const Dataset& dataset);
std::string dataset_text(const Dataset& dataset);
/// @}
/// One progress line: "epoch 2/5  step 120/235  loss: 0.4512 - accuracy: 0.8411  (3.1 s)".
std::string progress_text(int epoch, int epochs, std::int64_t step, std::int64_t steps, const Logs& logs,
                          double seconds);
double seconds_since_start();  ///< a monotonic clock for LiveProgress

/// Images with labels, displayable: `notebook::ImageGrid{images, captions}` as a cell's last
/// expression shows the images in a row, each with its caption.
struct ImageGrid {
  /// (N, H, W[, 1|3]) float32 or uint8.
  Tensor images;
  /// One per image (may be empty).
  std::vector<std::string> captions;
  /// Each pixel repeated scale x scale times.
  int scale = 2;
};

/// The images in a row with their captions (HTML).
inline nlohmann::json mime_bundle_repr(const ImageGrid& grid) {
  return {{"text/html", image_grid_html(grid.images, grid.captions, grid.scale)},
          {"text/plain", "ImageGrid(" + shape_str(grid.images.shape()) + ")"}};
}

/// One line of text as a display (what LiveProgress updates in a xeus kernel).
struct ProgressLine {
  /// The line shown.
  std::string text;
};
/// The line, as text and as preformatted HTML.
inline nlohmann::json mime_bundle_repr(const ProgressLine& line) {
  return {{"text/plain", line.text}, {"text/html", "<pre>" + html_escape(line.text) + "</pre>"}};
}

/// Live training progress for a notebook: pass it in fit()'s callbacks (with verbose = 0 so the
/// built-in progress bar stays quiet). In a xeus kernel (compiled with <xcpp/xdisplay.hpp> on the
/// include path) one display is created at the start of training and updated in place every
/// `every` batches; elsewhere (a terminal, cppyy, clang-repl) it prints one plain line per
/// `every` batches and one at each epoch's end to `out` (std::cout by default, which a kernel
/// redirects to the cell). `epochs` and `steps` are only for the "k/n" counters (-1: unknown).
class LiveProgress : public callbacks::Callback {
 public:
  /// Counters "k/n" with these totals (-1: unknown), a line every `every` batches, to `out` (nullptr: the display or
  /// std::cout).
  explicit LiveProgress(int epochs = -1, std::int64_t steps = -1, std::int64_t every = 10, std::ostream* out = nullptr)
      : epochs_(epochs), steps_(steps), every_(every > 0 ? every : 1), out_(out) {}

  /// Starts the clock (and, in a xeus kernel, the display).
  void on_train_begin(const Logs& /*logs*/) override {
    start_ = seconds_since_start();
#if KERASCPP_NOTEBOOK_XEUS
    id_ = xeus::new_xguid();
    xcpp::display(ProgressLine{"starting training"}, id_, false);
#endif
  }
  /// Remembers the epoch for the counters.
  void on_epoch_begin(int epoch, const Logs& /*logs*/) override { epoch_ = epoch; }
  /// Shows the line every `every` batches.
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override {
    if ((batch + 1) % every_ == 0) show(batch + 1, logs);
  }
  /// Shows the epoch's final line.
  void on_epoch_end(int /*epoch*/, const Logs& logs) override {
    show(-1, logs);
    ++lines_;
  }
  const std::string& last_line() const { return last_; }  ///< what was shown last
  /// The number of epochs whose final line was shown.
  int epochs_shown() const { return lines_; }

 private:
  void show(std::int64_t step, const Logs& logs) {
    last_ = progress_text(epoch_ + 1, epochs_, step, steps_, logs, seconds_since_start() - start_);
#if KERASCPP_NOTEBOOK_XEUS
    if (!out_) {
      xcpp::display(ProgressLine{last_}, id_, true);
      return;
    }
#endif
    std::ostream& o = out_ ? *out_ : std::cout;
    o << last_ << '\n' << std::flush;
  }

  int epochs_;
  std::int64_t steps_;
  std::int64_t every_;
  std::ostream* out_;
  int epoch_ = 0;
  int lines_ = 0;
  double start_ = 0;
  std::string last_;
#if KERASCPP_NOTEBOOK_XEUS
  // The display's id: a std::string, a fixed string or a class depending on the xeus version.
  decltype(xeus::new_xguid()) id_ = xeus::new_xguid();
#endif
};

}  // namespace kerascpp::notebook

// ---- the display bundles, each in the namespace of its type (argument-dependent lookup) ----
namespace kerascpp {

/// A Model shows its layer table (HTML; summary() as text).
inline nlohmann::json mime_bundle_repr(const Model& model) {
  return {{"text/html", notebook::model_html(model)}, {"text/plain", notebook::model_text(model)}};
}

/// An image-shaped tensor shows as the image (also in the HTML, which frontends prefer to PNG)
/// above the table of its first values.
inline nlohmann::json mime_bundle_repr(const Tensor& tensor) {
  nlohmann::json bundle = {{"text/plain", notebook::tensor_text(tensor)}};
  std::string html = notebook::tensor_html(tensor);
  if (notebook::is_image(tensor)) {
    std::string png = notebook::base64(notebook::tensor_png(tensor, 4));
    html = "<img src=\"data:image/png;base64," + png + "\"/>" + html;
    bundle["image/png"] = png;
  }
  bundle["text/html"] = html;
  return bundle;
}

/// Logs show as a table.
inline nlohmann::json mime_bundle_repr(const Logs& logs) {
  return {{"text/html", notebook::logs_html(logs)}, {"text/plain", notebook::logs_text(logs)}};
}

/// A Dataset shows its cardinality and element spec.
inline nlohmann::json mime_bundle_repr(const Dataset& dataset) {
  return {{"text/html", notebook::dataset_html(dataset)}, {"text/plain", notebook::dataset_text(dataset)}};
}

}  // namespace kerascpp

namespace kerascpp::callbacks {

/// A History shows as charts of its metrics per epoch (SVG).
inline nlohmann::json mime_bundle_repr(const History& history) {
  return {{"image/svg+xml", notebook::history_svg(history)}, {"text/plain", notebook::history_text(history)}};
}

}  // namespace kerascpp::callbacks

// ---- Cling's value printer (the interpreter's own display hook) ----
// Cling prints a cell's trailing expression of type T with `cling::printValue(const T*)`, found
// by qualified lookup, so these live in namespace cling. They only declare overloads there:
// nothing here needs Cling, and a compiler without it sees five ordinary inline functions.
namespace cling {

/// summary(), as model.summary() prints it.
inline std::string printValue(const kerascpp::Model* model) { return kerascpp::notebook::model_text(*model); }

/// The Tensor as `std::cout << tensor` prints it.
inline std::string printValue(const kerascpp::Tensor* tensor) {
  std::ostringstream out;
  out << *tensor;
  return out.str();
}

/// The Logs as `std::cout << logs` prints them: {loss: 0.3421, accuracy: 0.875}.
inline std::string printValue(const kerascpp::Logs* logs) {
  std::ostringstream out;
  out << *logs;
  return out.str();
}

/// "History(loss=[0.5123, 0.4011], ...)" (notebook::history_text).
inline std::string printValue(const kerascpp::callbacks::History* history) {
  return kerascpp::notebook::history_text(*history);
}

/// Its cardinality and element spec (notebook::dataset_text).
inline std::string printValue(const kerascpp::Dataset* dataset) { return kerascpp::notebook::dataset_text(*dataset); }

}  // namespace cling
