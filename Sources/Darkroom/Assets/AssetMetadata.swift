/// What Darkroom knows about an image file without decoding its pixels.
///
/// ```swift
/// let metadata = try AssetMetadata.read(path: "IMG_0001.jpg")
/// print(metadata.displayWidth, metadata.displayHeight, metadata.orientation.effective)
/// if let place = metadata.location { print(place.latitude, place.longitude) }
/// ```
///
/// Read it with ``read(path:)`` or ``read(_:)``: JPEG and PNG headers are parsed directly,
/// other formats through libvips' header-only load. Fields the file does not record are nil.
/// It encodes to the JSON that `darkroom info --json` prints.
///
/// `AssetMetadata` is a `Sendable` value type: share it across tasks and threads freely.
package struct AssetMetadata: Sendable, Equatable {
  /// The path as given.
  package var file: String
  /// Short format name: "jpeg", "png", "webp", "tiff", "heif", "gif", ...
  package var format: String
  /// The size of the file (or of the bytes in memory), in bytes.
  package var byteSize: Int
  /// Size of the stored pixels, before orientation.
  package var width: Int
  /// Height of the stored pixels, before orientation.
  package var height: Int
  /// What the file's EXIF Orientation tag says; ``OrientationTag/effective`` is the
  /// orientation renderers apply.
  package var orientation: OrientationTag
  /// Whether the pixels have an alpha (transparency) channel.
  package var hasAlpha: Bool
  /// When the photo was taken (EXIF DateTimeOriginal); nil when not recorded or invalid.
  package var captureDate: CaptureDate?
  /// Where the photo was taken (EXIF GPS); nil when not recorded or out of range.
  package var location: GPSLocation?
  /// The camera's maker (EXIF Make), such as "Canon".
  package var cameraMake: String?
  /// The camera's model (EXIF Model), such as "Canon EOS 40D".
  package var cameraModel: String?
  /// The lens's maker (EXIF LensMake).
  package var lensMake: String?
  /// The lens's model (EXIF LensModel).
  package var lensModel: String?
  /// Exposure time (EXIF ExposureTime), in seconds.
  package var exposureTime: Double?
  /// The aperture as an f-number (EXIF FNumber), such as 2.8.
  package var fNumber: Double?
  /// The ISO speed (EXIF ISOSpeedRatings).
  package var iso: Int?
  /// Focal length (EXIF FocalLength), in millimetres.
  package var focalLength: Double?
  /// The embedded colour profile; nil when there is none.
  package var iccProfile: ICCProfileInfo?
  /// How a HEIF or AVIF file codes its colour without a profile (its `nclx` box: primaries,
  /// transfer, bit depth); nil for other formats, or when it has none.
  package var codedColour: CodedColour?
  /// What the photo shows, in words: XMP `dc:description` (its default language), else EXIF
  /// ImageDescription.
  package var caption: String?
  /// XMP `xmp:Rating`: 1 to 5 stars, 0 for none, -1 for rejected.
  package var rating: Int?
  /// XMP `dc:subject`, and the last part of each Lightroom `lr:hierarchicalSubject` not
  /// among them.
  package var keywords: [String] = []
  /// The people named in it: XMP region names (MWG `mwg-rs:Name`, as Lightroom, digiKam and
  /// Picasa write a face's) and Microsoft's `MPReg:PersonDisplayName`, each once.
  package var people: [String] = []
  /// Where each of `captureDate`, `caption`, `rating` and `keywords` came from: `EXIF`,
  /// `XMP` (embedded), or a sidecar's file name (`IMG_0001.jpg.xmp`), by field.
  package var sources: [String: String] = [:]
  /// The nearest populated place to ``location`` (from the offline place data); nil
  /// without a position or the data.
  package var place: Place?
  /// The IANA time zone at ``location``, such as `America/Denver`; nil without a position or
  /// the data. Where the camera wrote no offset, ``captureDate``'s is this zone's.
  package var timeZone: String?
  /// The GPS receiver's date and time (GPSDateStamp, GPSTimeStamp; UTC): the capture date
  /// when nothing else gives one.
  var gpsDate: CaptureDate?
  /// Metadata that was ignored, one line each (a sidecar that is not XML, a rating of 9):
  /// the rest is read as usual.
  package var warnings: [String] = []
  /// Where the JPEG thumbnail a camera embeds in the EXIF block (IFD1) is in the file: a
  /// picture to show at once, read without decoding anything (ALAssetsLibrary's thumbnail).
  /// JPEG files only; nil when there is none.
  package var exifThumbnail: FileRange?
  /// Where the video of a motion photo is in the file (Google's and Samsung's: an MP4
  /// appended to the JPEG or HEIC, named by XMP; see ``MotionPhoto``); nil for a still alone.
  package var motionVideo: FileRange?
  /// The Live Photo video beside the file: the name of a MOV of the same name in its folder
  /// (`IMG_0001.MOV` beside `IMG_0001.HEIC`; see ``MotionPhoto/companion(of:)``), read with
  /// the sidecars; nil when there is none.
  package var liveVideo: String?
  /// The Live Photo's content identifier in the still's Apple maker note (``AppleMakerNote``):
  /// its MOV carries the same; nil when it has none.
  package var contentIdentifier: String?
  /// The settings of an edit another program left in the file's XMP or a sidecar
  /// (Lightroom's `crs:`, darktable's history), as written; nil for none. What Darkroom
  /// renders for them: ``foreignEdit``.
  package var foreignSettings: ForeignSettings?
  /// The file is the result of a Darkroom edit (its own XMP holds Darkroom's adjustment
  /// data): its pixels already are what it shows, so no other program's settings beside it
  /// are shown over them (``foreignEdit`` is nil).
  package var darkroomEdited = false
  /// Damage seen past a whole header, such as image data cut short (`truncated`): the
  /// header is described, and decoding refuses the file unless told to accept damage
  /// (`Renderer.failOn` `.none`). nil for a file that looks whole.
  package var damage: DarkroomError?

  /// Make and model as a person would say them: `Canon EOS 40D`, not `Canon Canon EOS 40D`
  /// (many cameras repeat the make in the model). nil when neither is recorded.
  package var cameraName: String? {
    guard let model = cameraModel else { return cameraMake }
    guard let make = cameraMake else { return model }
    // "NIKON CORPORATION" + "NIKON D850": the make's first word already opens the model.
    let brand = make.split(separator: " ").first.map { $0.lowercased() } ?? make.lowercased()
    if model.lowercased().hasPrefix(brand) { return model }
    return make + " " + model
  }

  /// Size as a person sees it, with orientation applied.
  package var displayWidth: Int { orientation.effective.swapsDimensions ? height : width }
  /// Height as a person sees it, with orientation applied.
  package var displayHeight: Int { orientation.effective.swapsDimensions ? width : height }
}

/// Where a part of a file is: `length` bytes from `offset`.
package struct FileRange: Sendable, Equatable, Hashable, Codable {
  package var offset: Int
  package var length: Int

  package init(offset: Int, length: Int) {
    (self.offset, self.length) = (offset, length)
  }
}

/// When the photo was taken, as the camera wrote it.
///
/// The fields are the camera's local time; ``utcOffsetMinutes`` places it in UTC when the
/// camera recorded its offset.
///
/// ```swift
/// if let date = metadata.captureDate {
///   print(date.iso8601)  // 2024-05-01T14:03:09.120+02:00
/// }
/// ```
///
/// `CaptureDate` is a `Sendable` value type.
package struct CaptureDate: Sendable, Equatable, Codable {
  /// The date and time as written (EXIF DateTimeOriginal), in the camera's local time;
  /// `second` may be 60 for a leap second.
  package var year, month, day, hour, minute, second: Int
  /// Fractional seconds as written (SubSecTimeOriginal), e.g. "123".
  package var subsecond: String?
  /// Offset from UTC in minutes (OffsetTimeOriginal); nil when the camera did not say.
  package var utcOffsetMinutes: Int?

  /// ISO 8601: `2024-05-01T14:03:09.120+02:00`, without an offset when unknown.
  package var iso8601: String {
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
///
/// Degrees are rounded to 1e-7 (about 1 cm), which is all EXIF's rationals carry. It encodes
/// as `{"latitude": ..., "longitude": ..., "altitude": ...}`. `GPSLocation` is a `Sendable`
/// value type.
package struct GPSLocation: Sendable, Equatable, Codable {
  /// Degrees north of the equator; negative in the south, within -90...90.
  package var latitude: Double
  /// Degrees east of Greenwich; negative in the west, within -180...180.
  package var longitude: Double
  /// Metres above sea level (negative below); nil when not recorded.
  package var altitude: Double?
}

extension GPSLocation {
  /// Encodes `altitude` as null rather than leaving it out.
  ///
  /// - Throws: Whatever `encoder` throws.
  package func encode(to encoder: Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(latitude, forKey: .latitude)
    try c.encode(longitude, forKey: .longitude)
    try c.encode(altitude, forKey: .altitude)
  }
}
