/// What Darkroom knows about an image file without decoding its pixels.
///
/// ```swift
/// let metadata = try AssetMetadata.read(path: "IMG_0001.jpg")
/// print(metadata.displayWidth, metadata.displayHeight, metadata.orientation.effective)
/// ```
public struct AssetMetadata: Sendable, Equatable {
  /// The path as given.
  public var file: String
  /// Short format name: "jpeg", "png", "webp", "tiff", "heif", "gif", ...
  public var format: String
  public var byteSize: Int
  /// Size of the stored pixels, before orientation.
  public var width: Int
  public var height: Int
  public var orientation: OrientationTag
  public var hasAlpha: Bool
  public var captureDate: CaptureDate?
  public var location: GPSLocation?
  public var cameraMake: String?
  public var cameraModel: String?
  public var lensMake: String?
  public var lensModel: String?
  /// Seconds.
  public var exposureTime: Double?
  public var fNumber: Double?
  public var iso: Int?
  /// Millimetres.
  public var focalLength: Double?
  /// The embedded colour profile; nil when there is none.
  public var iccProfile: ICCProfileInfo?

  /// Size as a person sees it, with orientation applied.
  public var displayWidth: Int { orientation.effective.swapsDimensions ? height : width }
  public var displayHeight: Int { orientation.effective.swapsDimensions ? width : height }
}

/// When the photo was taken, as the camera wrote it.
public struct CaptureDate: Sendable, Equatable {
  public var year, month, day, hour, minute, second: Int
  /// Fractional seconds as written (SubSecTimeOriginal), e.g. "123".
  public var subsecond: String?
  /// Offset from UTC in minutes (OffsetTimeOriginal); nil when the camera did not say.
  public var utcOffsetMinutes: Int?

  /// ISO 8601: `2024-05-01T14:03:09.120+02:00`, without an offset when unknown.
  public var iso8601: String {
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    var text = "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))"
    if let subsecond { text += ".\(subsecond)" }
    if let offset = utcOffsetMinutes {
      let sign = offset < 0 ? "-" : "+"
      text += "\(sign)\(two(abs(offset) / 60)):\(two(abs(offset) % 60))"
    }
    return text
  }

  /// Parses EXIF's `YYYY:MM:DD HH:MM:SS`; nil for blanks and impossible values.
  init?(exif text: String, subsecond: String?, offset: String?) {
    let parts = text.split(whereSeparator: { $0 == ":" || $0 == " " }).map { Int($0) }
    guard parts.count == 6, case let numbers = parts.compactMap({ $0 }), numbers.count == 6
    else { return nil }
    (year, month, day, hour, minute, second) =
      (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
    guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
      (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
    else { return nil }
    let digits = subsecond?.filter(\.isNumber) ?? ""
    self.subsecond = digits.isEmpty ? nil : digits
    utcOffsetMinutes = offset.flatMap(Self.parseOffset)
  }

  /// `+02:00`, `-05:30`; nil for anything else (cameras write "   :  " when unset).
  private static func parseOffset(_ text: String) -> Int? {
    let chars = Array(text)
    guard chars.count == 6, chars[0] == "+" || chars[0] == "-", chars[3] == ":",
      let h = Int(String(chars[1...2])), let m = Int(String(chars[4...5])), h <= 14, m < 60
    else { return nil }
    return (chars[0] == "-" ? -1 : 1) * (h * 60 + m)
  }
}

/// A GPS position in signed decimal degrees (south and west negative) and metres.
public struct GPSLocation: Sendable, Equatable, Codable {
  public var latitude: Double
  public var longitude: Double
  /// Metres above sea level (negative below); nil when not recorded.
  public var altitude: Double?
}

extension GPSLocation {
  /// Encodes `altitude` as null rather than leaving it out.
  public func encode(to encoder: Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(latitude, forKey: .latitude)
    try c.encode(longitude, forKey: .longitude)
    try c.encode(altitude, forKey: .altitude)
  }
}
