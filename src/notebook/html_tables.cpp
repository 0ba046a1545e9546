// HTML and plain-text renderings of models, tensors, logs and datasets for notebook displays.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "kerascpp/notebook/display.hpp"

namespace kerascpp::notebook {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

const char* kTableStyle = "<table style=\"border-collapse:collapse;font-family:monospace\">";

}  // namespace

std::string html_escape(const std::string& text) { return escape(text); }

// ---- Model ----
std::string model_text(const Model& model) {
  std::ostringstream out;
  model.summary(out);
  return out.str();
}

std::string model_html(const Model& model) {
  // summary() is the one place that knows each node's output shape; its rows are
  // " name (Class)   (None, ...)   params", the layer name and class without spaces.
  static const std::regex kRow(R"(^ (\S+) \((\w+)\)\s+(\([^)]*\))\s+(\d+)\s*$)");
  std::istringstream lines(model_text(model));
  std::string html = fmt::format("<div><b>Model: \"{}\"</b>", escape(model.name())) + kTableStyle +
                     "<thead><tr><th style=\"text-align:left\">Layer</th><th style=\"text-align:left\">Class</th>"
                     "<th style=\"text-align:left\">Output shape</th><th style=\"text-align:right\">Params</th>"
                     "</tr></thead><tbody>";
  std::string line;
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_match(line, m, kRow))
      html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td style=\"text-align:right\">{}</td></tr>",
                          escape(m[1]), escape(m[2]), escape(m[3]), m[4].str());
  std::int64_t total = 0, trainable = 0;
  for (Variable* v : model.variables()) {
    total += shape_numel(v->shape());
    if (v->trainable()) trainable += shape_numel(v->shape());
  }
  html += fmt::format("</tbody></table><p>Total params: {} (trainable {}, non-trainable {})</p></div>", total,
                      trainable, total - trainable);
  return html;
}

// ---- Tensor ----
namespace {

struct Head {
  std::int64_t rows = 0, cols = 0;  // shown
  std::int64_t row_size = 0;        // values per row of axis 0
  std::vector<float> values;
};

Head head_of(const Tensor& t, std::int64_t max_rows, std::int64_t max_cols) {
  Head h;
  const std::int64_t n = t.numel();
  std::int64_t rows = t.rank() == 0 ? 1 : t.dim(0);
  h.row_size = rows > 0 ? n / rows : 0;
  if (t.rank() <= 1) {  // a vector reads better as one row
    rows = 1;
    h.row_size = n;
  }
  h.rows = std::min(rows, max_rows);
  h.cols = std::min(h.row_size, max_cols);
  Tensor head = rows > h.rows && t.rank() > 1 ? t.slice(0, h.rows) : t;
  h.values = head.to_vector();
  return h;
}

std::string describe(const Tensor& t) {
  return fmt::format("Tensor(shape={}, dtype={}, device={})", shape_str(t.shape()), dtype_name(t.dtype()),
                     t.device().str());
}

}  // namespace

std::string tensor_text(const Tensor& tensor, std::int64_t max_rows, std::int64_t max_cols) {
  if (!tensor.defined()) return "Tensor(undefined)";
  Head h = head_of(tensor, max_rows, max_cols);
  std::string out = describe(tensor) + "\n";
  for (std::int64_t r = 0; r < h.rows; ++r) {
    out += "[";
    for (std::int64_t c = 0; c < h.cols; ++c) out += (c ? ", " : "") + number(h.values[r * h.row_size + c]);
    out += h.cols < h.row_size ? ", ...]\n" : "]\n";
  }
  const std::int64_t all_rows = tensor.rank() <= 1 ? 1 : tensor.dim(0);
  if (h.rows < all_rows) out += fmt::format("... ({} more rows)\n", all_rows - h.rows);
  return out;
}

std::string tensor_html(const Tensor& tensor, std::int64_t max_rows, std::int64_t max_cols) {
  if (!tensor.defined()) return "<pre>Tensor(undefined)</pre>";
  Head h = head_of(tensor, max_rows, max_cols);
  std::string html = "<div><code>" + escape(describe(tensor)) + "</code>" + kTableStyle + "<tbody>";
  for (std::int64_t r = 0; r < h.rows; ++r) {
    html += fmt::format("<tr><th style=\"color:gray\">{}</th>", r);
    for (std::int64_t c = 0; c < h.cols; ++c)
      html += "<td style=\"text-align:right;padding:0 6px\">" + number(h.values[r * h.row_size + c]) + "</td>";
    if (h.cols < h.row_size) html += "<td>&#8230;</td>";
    html += "</tr>";
  }
  const std::int64_t all_rows = tensor.rank() <= 1 ? 1 : tensor.dim(0);
  if (h.rows < all_rows)
    html += fmt::format("<tr><td colspan=\"{}\">&#8230; {} more rows</td></tr>", h.cols + 2, all_rows - h.rows);
  return html + "</tbody></table></div>";
}

std::string image_grid_html(const Tensor& images, const std::vector<std::string>& captions, int scale) {
  KERASCPP_CHECK_VALUE(images.defined() && images.rank() >= 3 && images.rank() <= 4,
                       "image_grid_html: expected images (N, H, W) or (N, H, W, 1|3), got {}",
                       images.defined() ? shape_str(images.shape()) : std::string("an undefined tensor"));
  std::string html = "<div style=\"display:flex;flex-wrap:wrap;gap:8px\">";
  const std::int64_t n = images.dim(0);
  for (std::int64_t i = 0; i < n; ++i) {
    Tensor one = images.slice(i, i + 1);
    Shape s(images.shape().begin() + 1, images.shape().end());
    one = one.reshape(s);
    html += "<figure style=\"margin:0;text-align:center\"><img src=\"data:image/png;base64," +
            base64(tensor_png(one, scale)) + "\"/><figcaption style=\"font-size:small\">" +
            escape(i < static_cast<std::int64_t>(captions.size()) ? captions[i] : std::string()) +
            "</figcaption></figure>";
  }
  return html + "</div>";
}

// ---- Logs ----
std::string logs_text(const Logs& logs) {
  std::string out;
  for (auto& kv : logs) out += (out.empty() ? "" : " - ") + kv.first + ": " + fmt::format("{:.4f}", kv.second);
  return out.empty() ? "Logs()" : out;
}

std::string logs_html(const Logs& logs) {
  std::string html = std::string(kTableStyle) + "<tbody>";
  for (auto& kv : logs)
    html += "<tr><th style=\"text-align:left\">" + escape(kv.first) + "</th><td style=\"text-align:right\">" +
            number(kv.second) + "</td></tr>";
  return html + "</tbody></table>";
}

// ---- Dataset ----
namespace {

std::string cardinality_str(std::int64_t c) {
  if (c == Dataset::kInfinite) return "infinite";
  if (c == Dataset::kUnknown) return "unknown";
  return std::to_string(c);
}

// The element spec as Keras/tf.data print it: one (shape, dtype) per component, the batch axis
// None for a batched dataset (its last batch may be smaller).
std::vector<std::string> element_spec(const Dataset& d) {
  std::vector<std::string> spec;
  if (!d.defined()) return spec;
  Example first;
  if (!d.make_iterator()->next(first)) return spec;
  for (const Tensor& t : first) {
    Shape s = t.shape();
    if (d.is_batched() && !s.empty()) s[0] = -1;
    spec.push_back(fmt::format("TensorSpec(shape={}, dtype={})", shape_str(s), dtype_name(t.dtype())));
  }
  return spec;
}

}  // namespace

std::string dataset_text(const Dataset& dataset) {
  if (!dataset.defined()) return "Dataset(undefined)";
  std::string out = "Dataset(cardinality=" + cardinality_str(dataset.cardinality()) + ", element_spec=(";
  auto spec = element_spec(dataset);
  for (std::size_t i = 0; i < spec.size(); ++i) out += (i ? ", " : "") + spec[i];
  return out + "))";
}

std::string dataset_html(const Dataset& dataset) {
  if (!dataset.defined()) return "<pre>Dataset(undefined)</pre>";
  std::string html = std::string("<div><b>Dataset</b>") + kTableStyle + "<tbody><tr><th style=\"text-align:left\">" +
                     "cardinality</th><td>" + cardinality_str(dataset.cardinality()) + "</td></tr>";
  auto spec = element_spec(dataset);
  for (std::size_t i = 0; i < spec.size(); ++i)
    html += fmt::format("<tr><th style=\"text-align:left\">component {}</th><td>{}</td></tr>", i, escape(spec[i]));
  return html + "</tbody></table></div>";
}

// ---- progress ----
std::string progress_text(int epoch, int epochs, std::int64_t step, std::int64_t steps, const Logs& logs,
                          double seconds) {
  std::string out = epochs > 0 ? fmt::format("epoch {}/{}", epoch, epochs) : fmt::format("epoch {}", epoch);
  if (step >= 0) out += steps > 0 ? fmt::format("  step {}/{}", step, steps) : fmt::format("  step {}", step);
  else out += "  done";
  if (!logs.empty()) out += "  " + logs_text(logs);
  return out + fmt::format("  ({:.1f} s)", seconds);
}

double seconds_since_start() {
  using clock = std::chrono::steady_clock;
  static const clock::time_point start = clock::now();
  return std::chrono::duration<double>(clock::now() - start).count();
}

}  // namespace kerascpp::notebook
