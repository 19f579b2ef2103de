import ArgumentParser
import Darkroom
import FoundationEssentials

/// Where renditions are cached, shared by `render` and `cache`.
struct CacheOptions: ParsableArguments {
  @Option(
    name: .customLong("cache-dir"),
    help: ArgumentHelp(
      "Cache folder. Default: the library's .darkroom/cache, else $XDG_CACHE_HOME/darkroom, else ~/.cache/darkroom.",
      valueName: "dir"))
  var folder: String?

  @Option(
    name: .customLong("cache-limit"),
    help: ArgumentHelp(
      "Evict least recently used renditions past this size (e.g. 500M, 2G).", valueName: "size"))
  var limit: ByteSize = ByteSize(bytes: CacheSettings.defaultLimitBytes)

  /// The cache's folder (nil: the one a source's path decides) and bound.
  var settings: CacheSettings {
    CacheSettings(folder: folder.map { URL(fileURLWithPath: $0) }, limitBytes: limit.bytes)
  }
}

/// A size such as `1G`, `500M`, `64K` or plain bytes (binary units).
struct ByteSize: ExpressibleByArgument {
  var bytes: Int64

  init(bytes: Int64) { self.bytes = bytes }

  init?(argument: String) {
    let text = argument.uppercased().replacing("IB", with: "").replacing("B", with: "")
    let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
    var digits = Substring(text)
    var scale: Int64 = 1
    if let last = digits.last, let unit = units[last] {
      scale = unit
      digits = digits.dropLast()
    }
    guard let value = Double(digits), value >= 0, value * Double(scale) < 9e18 else { return nil }
    bytes = Int64(value * Double(scale))
  }

  var defaultValueDescription: String { "\(bytes >> 20)M" }
}
