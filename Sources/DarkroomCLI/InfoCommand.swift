import ArgumentParser
import Darkroom
import FoundationEssentials

struct InfoCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "info",
    abstract: "Show size, orientation, capture date, GPS, camera and colour profile.",
    usage: "darkroom info <files> ... [--json] [<options>]",
    discussion: prose(
      """
      Reads only each file's header: no pixels are decoded, so it is fast on large
      files. Files without EXIF (most PNG, GIF and WebP) are normal; their EXIF
      fields are empty.

      Examples:
        darkroom info IMG_0001.jpg
        darkroom info --json Samples/*.jpg | jq '.[] | {file, captureDate}'

      With --json, prints one JSON array with an object per file, in argument order.
      A file that cannot be read gets {"file", "error", "errorKind"} in its place
      and a line on standard error; the others still print, and the exit status is
      1. Field reference: docs/info-json.md.
      """))

  @Argument(help: "Image files to describe.")
  var files: [String]

  @Flag(help: "Print a JSON array (one object per file) instead of a table.")
  var json = false

  @OptionGroup var formats: FormatOptions

  @OptionGroup var catalog: CatalogOption

  @Option(
    help: ArgumentHelp(
      "Stop reading a header in a worker after this many seconds (0: no limit).",
      valueName: "seconds"))
  var timeout: Double = 60

  func validate() throws {
    guard timeout >= 0, timeout.isFinite else {
      throw ValidationError(
        "Expected a number of seconds, 0 or more, for --timeout but received \(timeout)")
    }
  }

  func run() throws {
    formats.allow()
    Containment.timeLimit = timeout == 0 ? nil : .milliseconds(Int64(timeout * 1000))
    var failed = false
    var entries: [InfoEntry] = []
    var blocks: [String] = []
    for file in try resolveItems(files) {
      do {
        // A video is described from its container header, as a scan catalogues it.
        if let video = try VideoHeader.describe(path: file) {
          if json {
            entries.append(.video(file: file, video))
          } else {
            blocks.append(table(file, video))
          }
          continue
        }
        let metadata = try AssetMetadata.read(path: file)
        if json { entries.append(.metadata(metadata)) } else { blocks.append(table(metadata)) }
      } catch {
        failed = true
        reportError(error)
        if json { entries.append(.failure(file: file, error: error)) }
      }
    }
    if json {
      print(try jsonText(entries))
    } else if !blocks.isEmpty {
      print(blocks.joined(separator: "\n"))
    }
    if failed { throw WorkFailed() }
  }

  private func table(_ file: String, _ v: VideoHeader) -> String {
    let rows: [(String, String?)] = [
      ("File", file), ("Format", v.format + " (video)"), ("Duration", fixed(v.duration, 2) + " s"),
      ("Stored size", "\(v.width) x \(v.height)"),
      ("Display size", "\(v.displayWidth) x \(v.displayHeight)"),
      ("Rotation", "\(v.rotation) degrees"),
      ("Coded colour", v.colour?.summary),
      ("Created", v.creationDate.map { Date(timeIntervalSince1970: $0).formatted(.iso8601) }),
    ]
    return Self.aligned(rows)
  }

  private static func aligned(_ rows: [(String, String?)]) -> String {
    let width = rows.map(\.0.count).max() ?? 0
    return rows.compactMap { label, value in
      guard let value, !value.isEmpty else { return nil }
      return label + String(repeating: " ", count: width - label.count) + "  " + value
    }.joined(separator: "\n") + "\n"
  }

  private func table(_ m: AssetMetadata) -> String {
    func number(_ value: Double?, _ digits: Int = 2) -> String? {
      value.map { fixed($0, digits) }
    }
    var orientation = "\(m.orientation.effective.rawValue) (\(m.orientation.effective.summary))"
    switch m.orientation {
    case .absent: orientation += ", no tag"
    case .invalid(let raw): orientation += ", tag value \(raw) is invalid and ignored"
    case .ignored(let raw):
      orientation +=
        ", EXIF says \(raw), ignored: the \(m.format.uppercased()) decoder orients the pixels"
    case .valid: break
    }
    let exposure = m.exposureTime.map { $0 < 1 ? "1/\(Int((1 / $0).rounded())) s" : "\($0) s" }
    let gps = m.location.map { place in
      let altitude = place.altitude.map { ", \(fixed($0, 1)) m" } ?? ""
      return "\(fixed(place.latitude, 6)), \(fixed(place.longitude, 6))" + altitude
    }
    // A value read from a sidecar says so: "2019-04-01T09:00:00 (IMG_1.jpg.xmp)".
    func sourced(_ value: String?, _ field: String) -> String? {
      guard let value, let source = m.sources[field], source != "EXIF", source != "XMP" else {
        return value
      }
      return "\(value) (\(source))"
    }
    let stars = m.rating.map { $0 < 0 ? "rejected" : $0 == 0 ? "none" : "\($0) of 5" }
    var rows: [(String, String?)] = [
      ("File", m.file),
      ("Format", m.format),
      ("File size", "\(m.byteSize) bytes"),
      ("Stored size", "\(m.width) x \(m.height)"),
      ("Display size", "\(m.displayWidth) x \(m.displayHeight)"),
      ("Orientation", orientation),
      ("Alpha", m.hasAlpha ? "yes" : "no"),
      ("Captured", sourced(m.captureDate?.iso8601, "captureDate")),
      (
        "Time zone",
        m.timeZone.map { zone in
          m.sources["utcOffset"] != nil ? "\(zone) (from GPS; the camera wrote no offset)" : zone
        }
      ),
      ("GPS", gps),
      ("Place", m.place?.description),
      ("Camera", m.cameraName),
      ("Lens", [m.lensMake, m.lensModel].compactMap { $0 }.joined(separator: " ")),
      ("Exposure", exposure),
      ("Aperture", m.fNumber.map { "f/" + (number($0, 1) ?? "") }),
      ("ISO", m.iso.map(String.init)),
      ("Focal length", m.focalLength.map { (number($0, 1) ?? "") + " mm" }),
      (
        "ICC profile",
        m.iccProfile.map {
          "\($0.description ?? "unnamed") (\($0.colorSpace ?? "?"), \($0.byteSize) bytes)"
        }
          ?? "none"
      ),
      ("Coded colour", m.codedColour?.summary),
      ("Motion photo", m.motionVideo.map { "a video of \($0.length) bytes at byte \($0.offset)" }),
      ("Live Photo", m.liveVideo.map { "its video is \($0)" }),
      ("Edited in", m.foreignEdit.map(Self.foreign)),
      ("Damage", m.damage?.message),
      ("Caption", sourced(m.caption, "caption")),
      ("Rating", sourced(stars, "rating")),
      (
        "Keywords",
        sourced(m.keywords.isEmpty ? nil : m.keywords.joined(separator: ", "), "keywords")
      ),
      ("People", sourced(m.people.isEmpty ? nil : m.people.joined(separator: ", "), "people")),
    ]
    rows += m.warnings.map { ("Warning", $0) }
    return Self.aligned(rows)
  }
}

extension InfoCommand {
  /// Another program's edit in words: `Lightroom (IMG_0001.xmp): crop ... | tone ...;
  /// approximated: Exposure2012; not rendered: Clarity2012`.
  static func foreign(_ edit: ForeignEdit) -> String {
    var parts = [
      edit.alreadyApplied
        ? "already applied to the pixels" : edit.filters.isEmpty ? "nothing rendered" : edit.filters
    ]
    if !edit.approximated.isEmpty {
      parts.append("approximated: " + edit.approximated.joined(separator: ", "))
    }
    if !edit.ignored.isEmpty {
      parts.append("not rendered: " + edit.ignored.joined(separator: ", "))
    }
    return "\(edit.programName) (\(edit.source)): " + parts.joined(separator: "; ")
  }
}

/// One element of `info --json`'s array.
private enum InfoEntry: Encodable {
  case metadata(AssetMetadata)
  case video(file: String, VideoHeader)
  case failure(file: String, error: Error)

  private enum Field: String, CodingKey {
    case file, error, errorKind, mediaType, format, duration, width, height, displayWidth,
      displayHeight, rotation, codedColour, creationDate
  }

  func encode(to encoder: Encoder) throws {
    switch self {
    case .metadata(let metadata):
      try metadata.encode(to: encoder)
    case .video(let file, let v):
      var c = encoder.container(keyedBy: Field.self)
      try c.encode(file, forKey: .file)
      try c.encode("video", forKey: .mediaType)
      try c.encode(v.format, forKey: .format)
      try c.encode(v.duration, forKey: .duration)
      try c.encode(v.width, forKey: .width)
      try c.encode(v.height, forKey: .height)
      try c.encode(v.displayWidth, forKey: .displayWidth)
      try c.encode(v.displayHeight, forKey: .displayHeight)
      try c.encode(v.rotation, forKey: .rotation)
      try c.encode(v.colour?.printed, forKey: .codedColour)
      try c.encode(
        v.creationDate.map { Date(timeIntervalSince1970: $0).formatted(.iso8601) },
        forKey: .creationDate)
    case .failure(let file, let error):
      var c = encoder.container(keyedBy: Field.self)
      try c.encode(file, forKey: .file)
      let darkroom = error as? DarkroomError
      try c.encode(darkroom?.message ?? "\(error)", forKey: .error)
      try c.encode(darkroom?.kind.rawValue ?? "io", forKey: .errorKind)
    }
  }
}
