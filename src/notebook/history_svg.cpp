// Training curves of a History as one inline SVG: a small chart per metric (loss first), the
// validation series ("val_x") drawn dashed on the chart of "x", epochs on the x axis.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "kerascpp/notebook/display.hpp"

namespace kerascpp::notebook {
namespace {

constexpr double kChartW = 320, kChartH = 200, kLeft = 52, kRight = 12, kTop = 24, kBottom = 30;

// The charts in Keras' order: "loss" first, then the other training metrics as History keeps
// them (sorted by name), each with its "val_" partner.
std::vector<std::string> chart_keys(const callbacks::History& h) {
  std::vector<std::string> keys;
  if (h.history.count("loss")) keys.push_back("loss");
  for (auto& kv : h.history)
    if (kv.first != "loss" && kv.first.rfind("val_", 0) != 0 && kv.first != "learning_rate") keys.push_back(kv.first);
  for (auto& kv : h.history)  // a val_ series without its training partner gets a chart of its own
    if (kv.first.rfind("val_", 0) == 0 && !h.history.count(kv.first.substr(4))) keys.push_back(kv.first);
  return keys;
}

std::string polyline(const std::vector<double>& ys, const std::vector<double>& xs, double x0, double x1, double y0,
                     double y1, double ox, const char* colour, bool dashed) {
  std::string points;
  auto px = [&](double x) { return ox + kLeft + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (kChartW - kLeft - kRight); };
  auto py = [&](double y) { return kTop + (y1 > y0 ? (y1 - y) / (y1 - y0) : 0.5) * (kChartH - kTop - kBottom); };
  std::string dots;
  for (std::size_t i = 0; i < ys.size(); ++i) {
    if (!std::isfinite(ys[i])) continue;
    points += fmt::format("{:.1f},{:.1f} ", px(xs[i]), py(ys[i]));
    dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>", px(xs[i]), py(ys[i]), colour);
  }
  return fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>", colour,
                     dashed ? " stroke-dasharray=\"5,3\"" : "", points) +
         dots;
}

}  // namespace

std::string history_svg(const callbacks::History& history) {
  const std::vector<std::string> keys = chart_keys(history);
  const double width = std::max<double>(1, static_cast<double>(keys.size())) * kChartW;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">",
      width, kChartH);
  if (keys.empty()) svg += fmt::format("<text x=\"10\" y=\"{:.0f}\">no epochs recorded</text>", kChartH / 2);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const double ox = static_cast<double>(k) * kChartW;
    const std::string& key = keys[k];
    const std::vector<double>& train = history.history.at(key);
    const std::string val_key = key.rfind("val_", 0) == 0 ? std::string() : "val_" + key;
    const std::vector<double>* val = history.history.count(val_key) ? &history.history.at(val_key) : nullptr;
    // Epoch numbers from History::epoch (1-based on the axis like Keras' progress bar).
    std::vector<double> xs;
    for (std::size_t i = 0; i < train.size(); ++i)
      xs.push_back(i < history.epoch.size() ? history.epoch[i] + 1.0 : static_cast<double>(i + 1));
    double lo = INFINITY, hi = -INFINITY;
    for (double y : train)
      if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
    if (val)
      for (double y : *val)
        if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
    if (!(lo <= hi)) lo = 0, hi = 1;
    if (hi - lo < 1e-12) lo -= 0.5, hi += 0.5;
    const double pad = (hi - lo) * 0.08;
    lo -= pad;
    hi += pad;
    const double x0 = xs.empty() ? 0 : xs.front(), x1 = xs.empty() ? 1 : xs.back();
    const double plot_b = kChartH - kBottom, plot_r = ox + kChartW - kRight;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"16\" font-weight=\"bold\">{}</text>", ox + kLeft, key);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#999\"/>",
        ox + kLeft, kTop, kChartW - kLeft - kRight, plot_b - kTop);
    svg +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>", ox + kLeft - 4, kTop + 4, hi);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>", ox + kLeft - 4, plot_b, lo);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">epoch</text>",
                       ox + (kLeft + kChartW - kRight) / 2, kChartH - 6);
    svg +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"start\">{:.0f}</text>", ox + kLeft, plot_b + 13, x0);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}</text>", plot_r, plot_b + 13, x1);
    svg += polyline(train, xs, x0, x1, lo, hi, ox, "#1f77b4", false);
    if (val) {
      svg += polyline(*val, xs, x0, x1, lo, hi, ox, "#ff7f0e", true);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"16\" text-anchor=\"end\" fill=\"#ff7f0e\">{}</text>", plot_r, val_key);
    }
  }
  return svg + "</svg>";
}

std::string history_text(const callbacks::History& history) {
  std::string out = "History(";
  bool first = true;
  for (auto& kv : history.history) {
    out += (first ? "" : ", ") + kv.first + "=[";
    for (std::size_t i = 0; i < kv.second.size(); ++i) out += (i ? ", " : "") + fmt::format("{:.4f}", kv.second[i]);
    out += "]";
    first = false;
  }
  return out + ")";
}

}  // namespace kerascpp::notebook
