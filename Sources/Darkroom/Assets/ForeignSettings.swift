#if canImport(Glibc)
  import Glibc
#endif

/// The settings another program left in an XMP packet for an edit it made, as written:
/// Lightroom's and Camera Raw's `crs:` properties, or darktable's history (each module's
/// last entry up to `history_end`). The metadata keeps them as they are; what Darkroom renders
/// for them is ``ForeignEdit``'s to say (``AssetMetadata/foreignEdit``).
package struct ForeignSettings: Sendable, Codable, Hashable {
  /// `lightroom` (Camera Raw settings) or `darktable`.
  package var program: String
  /// Where they were read: `XMP` (the file's own packet) or a sidecar's name.
  package var source: String
  /// Lightroom: each `crs:` property by name, as written (`"CropLeft": "0.1"`). darktable:
  /// each module's last entry, whether it is enabled and its parameters (`"crop": "1
  /// cdcccc3d..."`).
  package var values: [String: String]
  /// darktable's modules used more than once (a second instance is not rendered).
  package var instances: [String]

  /// Camera Raw's settings namespace.
  package static let crs = "http://ns.adobe.com/camera-raw-settings/1.0/"
  /// darktable's namespace.
  package static let darktable = "http://darktable.sf.net/"

  /// The program as people name it: `Lightroom`, `darktable`.
  package var programName: String { program == "lightroom" ? "Lightroom" : program }

  /// 16 hex digits of the SHA-256 of their canonical JSON: names them in cache keys and
  /// versions (equal settings, equal digests).
  package var digest: String {
    String(ContentHash.of(bytes: Canonical.json(self)).hex.prefix(16))
  }

  /// Whether setting `name` is `True` (Lightroom's booleans, in any case).
  func flag(_ name: String) -> Bool { values[name]?.lowercased() == "true" }

  /// The settings as the catalog keeps them: JSON that `JSONDecoder` reads back as they
  /// are, written by hand, keys in order (a scan writes one for each photo edited elsewhere,
  /// and `JSONEncoder` cost as much as reading the settings).
  var catalogJSON: String {
    var out = "{\"instances\":["
    out += instances.map(Self.jsonString).joined(separator: ",")
    out += "],\"program\":" + Self.jsonString(program)
    out += ",\"source\":" + Self.jsonString(source) + ",\"values\":{"
    out += values.sorted { $0.key < $1.key }
      .map { Self.jsonString($0.key) + ":" + Self.jsonString($0.value) }
      .joined(separator: ",")
    return out + "}}"
  }

  /// `text` as a JSON string: quotes, backslashes and control characters escaped, the rest
  /// as it is (UTF-8).
  static func jsonString(_ text: String) -> String {
    if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
      return "\"" + text + "\""
    }
    var out = "\""
    out.reserveCapacity(text.utf8.count + 2)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// The settings in the sidecars beside the file at `path` (the winning sidecar's, as
  /// ``AssetMetadata`` reads them); nil for none. What a renderer handed only the file's
  /// bytes cannot read for itself.
  package static func besideFile(_ path: String) -> ForeignSettings? {
    var warnings: [String] = []
    var found: ForeignSettings?
    for (name, bytes) in AssetMetadata.sidecarPackets(of: path, warnings: &warnings) {
      guard let packet = try? XMPPacket(bytes), let settings = read(packet, source: name),
        settings.belong(to: path, sidecar: name)
      else { continue }
      found = settings
    }
    return found
  }

  /// Whether these settings, read from the sidecar `sidecar`, are those of the file at
  /// `path`. darktable's `NAME.EXT.xmp` names its file whole; Lightroom's `NAME.xmp` is a
  /// RAW's, and a JPEG of the same name beside it (the camera's own, or one rendered from the
  /// RAW) is another picture: they are its when `crs:RawFileName` names it, or, without one,
  /// when it is a RAW itself or no RAW of that name is beside it.
  func belong(to path: String, sidecar: String) -> Bool {
    let file = FilePath(path)
    guard program == "lightroom", sidecar.lowercased() != file.name.lowercased() + ".xmp",
      let (stem, ext) = file.splitExtension
    else { return true }
    if let raw = values["RawFileName"], !raw.isEmpty {
      return raw.lowercased() == file.name.lowercased()
    }
    if TrustedFormats.rawExtensions.contains(ext.lowercased()) { return true }
    return !RawNames.shared.has(FilePath(stem).name, in: file.parent.isEmpty ? "." : file.parent)
  }

  /// The settings in `packet`, read from `source`: Camera Raw's if it has any, else
  /// darktable's history; nil for neither, and for a packet Darkroom wrote (an edit's own,
  /// or `adjustments --xmp`'s: the edit is Darkroom's).
  package static func read(_ packet: XMPPacket, source: String) -> ForeignSettings? {
    guard !packet.has(XMPPacket.darkroom, "AdjustmentData") else { return nil }
    let names = packet.names(in: crs)
    if !names.isEmpty {
      var values: [String: String] = [:]
      for name in names {
        // A sequence (a tone curve's points) is its items joined by `;`.
        let items = packet.list(crs, name)
        values[name] = items.count > 1 ? items.joined(separator: ";") : items.first ?? ""
      }
      return ForeignSettings(program: "lightroom", source: source, values: values, instances: [])
    }
    let dt = darktable
    let items = packet.elements(XMPPacket.rdf, "li").filter { $0[dt + "operation"] != nil }
    guard !items.isEmpty else { return nil }
    let end = packet.text(dt, "history_end").flatMap { Int($0) } ?? items.count
    var settings = ForeignSettings(
      program: "darktable", source: source, values: [:], instances: [])
    for (index, item) in items.enumerated() {
      guard let operation = item[dt + "operation"],
        (item[dt + "num"].flatMap { Int($0) } ?? index) < end
      else { continue }
      if let priority = item[dt + "multi_priority"], priority != "0" {
        if !settings.instances.contains(operation) { settings.instances.append(operation) }
        continue
      }
      settings.values[operation] =
        (item[dt + "enabled"] == "0" ? "0 " : "1 ") + (item[dt + "params"] ?? "")
    }
    return settings
  }
}

/// The names (without extension) of the camera RAWs in folders, read once a folder and read
/// again when the folder changes (its modification time): whether `IMG_0001.CR3` is beside
/// `IMG_0001.jpg` costs one `stat` of the folder, not one for each RAW extension in each case.
final class RawNames: Sendable {
  static let shared = RawNames()
  private struct Folder {
    var changed: (Int, Int)
    var stems: Set<String>
  }
  private let folders = Locked([String: Folder]())

  /// Whether a RAW named `stem`.EXT (any RAW extension, any case) is in `folder`.
  func has(_ stem: String, in folder: String) -> Bool {
    var status = stat()
    guard stat(folder, &status) == 0 else { return false }
    let changed = (Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec))
    if let known = folders.withLock({ $0[folder] }), known.changed == changed {
      return known.stems.contains(stem)
    }
    let stems = Self.read(folder)
    folders.withLock { folders in
      if folders.count >= 256 { folders.removeAll() }
      folders[folder] = Folder(changed: changed, stems: stems)
    }
    return stems.contains(stem)
  }

  private static func read(_ folder: String) -> Set<String> {
    guard let directory = opendir(folder) else { return [] }
    defer { closedir(directory) }
    var stems: Set<String> = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard let (stem, ext) = FilePath(name).splitExtension,
        TrustedFormats.rawExtensions.contains(ext.lowercased())
      else { continue }
      stems.insert(stem)
    }
    return stems
  }
}
