import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// An asset's stable, opaque identifier: 26 characters of Crockford base32 whose first ten
/// encode the millisecond it was made, so ids sort by the time the library first saw the
/// asset (as ULIDs do). It stays with the asset through renames, moves and edits, like
/// PhotoKit's `localIdentifier`.
///
/// ```swift
/// let id = AssetID("01JD3ZQ4N8W5XK2M7P9R1T6V0B")  // nil unless well formed
/// ```
public struct AssetID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
  /// The 26-character text form.
  public let rawValue: String

  static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

  /// A digit's value, 0 to 31 (0 for a byte not in the alphabet: ids are checked on entry).
  static func digitValue(_ byte: UInt8) -> UInt8 {
    digitValues[Int(byte)]
  }

  private static let digitValues: [UInt8] = {
    var values = [UInt8](repeating: 0, count: 256)
    for (value, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(value) }
    return values
  }()

  /// An id from its text form; nil unless it is 26 characters of Crockford base32 (upper
  /// case, no I, L, O or U).
  public init?(_ text: String) {
    let bytes = Array(text.utf8)
    guard bytes.count == 26, bytes.allSatisfy(Self.alphabet.contains), bytes[0] <= UInt8(ascii: "7")
    else { return nil }
    rawValue = text
  }

  /// A new id for `millisecond` (since 1970, now by default) followed by 80 random bits.
  public static func make(millisecond: UInt64 = AssetID.nowMilliseconds()) -> AssetID {
    var random = SystemRandomNumberGenerator()
    var digits = [UInt8](repeating: 0, count: 26)
    var time = millisecond
    for index in stride(from: 9, through: 0, by: -1) {
      digits[index] = alphabet[Int(time & 31)]
      time >>= 5
    }
    for index in 10..<26 { digits[index] = alphabet[Int(random.next() & 31)] }
    return AssetID(unchecked: String(decoding: digits, as: UTF8.self))
  }

  init(unchecked rawValue: String) { self.rawValue = rawValue }

  /// The id as 128 bits: its 26 base-32 digits, the first of which is at most 7.
  public var bits: UInt128 {
    var value: UInt128 = 0
    for byte in rawValue.utf8 { value = value << 5 | UInt128(Self.digitValue(byte)) }
    return value
  }

  /// The id whose 128 bits are `bits` (an id that did not come from ``make(millisecond:)``
  /// does not sort by time: a space's ids are random).
  public init(bits: UInt128) {
    var digits = [UInt8](repeating: 0, count: 26)
    var rest = bits
    for index in stride(from: 25, through: 0, by: -1) {
      digits[index] = Self.alphabet[Int(rest & 31)]
      rest >>= 5
    }
    rawValue = String(decoding: digits, as: UTF8.self)
  }

  /// `ids` with each one once, in the order they first appear.
  public static func unique(_ ids: [AssetID]) -> [AssetID] {
    var seen = Set<AssetID>()
    return ids.filter { seen.insert($0).inserted }
  }

  /// Milliseconds since 1970, now.
  public static func nowMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
  }

  public var description: String { rawValue }
  public static func < (a: AssetID, b: AssetID) -> Bool { a.rawValue < b.rawValue }

  public init(from decoder: Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let id = AssetID(text) else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: decoder.codingPath, debugDescription: "not an asset id: \(text)"))
    }
    self = id
  }

  public func encode(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }
}

/// Photo or video.
public enum MediaType: String, Sendable, Codable, CaseIterable {
  case photo, video
}

/// One photo or video of a library, as its catalog knows it: the `PHAsset` of Darkroom.
///
/// Paths are relative to the library's root, with `/` between folders. Dates are seconds
/// since 1970 (UTC). `Asset` is a `Sendable` value; it is a snapshot, not a live object.
public struct Asset: Sendable, Codable, Equatable, Identifiable {
  public var id: AssetID
  /// The path relative to the library's root, e.g. `2024/trip/IMG_0001.jpg`.
  public var path: String
  /// SHA-256 of the file's bytes, 64 hex digits.
  public var contentHash: String
  public var byteSize: Int64
  package var identity: FileIdentity
  public var mediaType: MediaType
  /// `jpeg`, `png`, `heif`, ..., or for videos `mp4`, `mov`, `m4v`, `3gp`.
  public var format: String
  /// The size as stored, and as shown (after orientation or a video's rotation).
  public var width: Int
  public var height: Int
  public var displayWidth: Int
  public var displayHeight: Int
  /// EXIF orientation (1-8; 1 when absent), or a video's rotation in degrees.
  public var orientation: Int
  /// When it was taken (EXIF DateTimeOriginal, a video's creation time), if known. A photo's
  /// local time without an offset is taken as UTC; `captureOffsetMinutes` is then nil.
  public var captureDate: Double?
  public var captureOffsetMinutes: Int?
  /// The date lists sort by: the capture date, or else the file's modification time.
  public var sortDate: Double
  public var latitude: Double?
  public var longitude: Double?
  public var altitude: Double?
  /// Make and model as one name (`AssetMetadata.cameraName`).
  public var camera: String?
  public var lens: String?
  public var exposureTime: Double?
  public var fNumber: Double?
  public var iso: Int?
  public var focalLength: Double?
  /// A video's length in seconds.
  public var duration: Double?
  /// The version of the file's edit (0: not edited).
  public var adjustmentVersion: Int
  public var isFavourite: Bool
  public var isHidden: Bool
  /// When it was moved to the trash, if it is there.
  public var trashedAt: Double?
  /// Its folder is missing or unmounted: kept, not deleted (see `Library.scan(_:options:progress:)`).
  public var isOffline: Bool
  /// When the catalog first saw it.
  public var addedAt: Double
  /// Where it was before it went to the trash (``path`` is then in `.darkroom/trash/`).
  public var trashedFrom: String?
  /// What the photo shows, in words; its rating (1 to 5 stars, 0 none, -1 rejected); its
  /// keywords: as `AssetMetadata` reads them, sidecars first.
  public var caption: String? = nil
  public var rating: Int? = nil
  public var keywords: [String] = []
  /// The people named in it (XMP region names).
  public var people: [String] = []
  /// The IANA time zone where it was taken (from its GPS position), such as `America/Denver`.
  public var timeZone: String? = nil
  /// The nearest populated place to its GPS position, that place's region (a state, a
  /// province) and country, in English, from GeoNames.
  public var place: String? = nil
  public var region: String? = nil
  public var country: String? = nil
  /// Where the JPEG thumbnail the camera embedded is in the file, as the scan found it
  /// (``AssetMetadata/exifThumbnail``): shown until a thumbnail is made.
  package var exifThumbnail: FileRange? = nil
  /// Where a motion photo's video is in the file (``AssetMetadata/motionVideo``).
  package var motionVideo: FileRange? = nil
  /// A Live Photo's video: the name of the MOV beside the file (`AssetMetadata.liveVideo`),
  /// which the scan does not catalogue as an asset of its own.
  public var liveVideo: String? = nil
  /// The settings of the edit another program made of it (Lightroom's, darktable's), read
  /// from its sidecars or its own XMP by the scan, which its renditions show: the catalog's
  /// mark of an asset edited elsewhere. nil for none, for settings that change nothing
  /// Darkroom renders, and for a file Darkroom edited.
  package var foreignSettings: ForeignSettings? = nil
  /// What is wrong with its file, when the scan found it damaged (cut short, a header that
  /// makes no sense): such a file is an asset still, shown as far as it can be decoded. nil
  /// for a file that reads whole.
  package var damage: AssetDamage? = nil

  /// Whether it has pixels to show: a whole file, or a damaged one whose header was read
  /// (one cut short, shown as far as it decodes).
  public var isShowable: Bool { damage == nil || width > 0 }

  /// Whether the asset is a live or motion photo: a still with a video of its own.
  public var hasMotion: Bool { motionVideo != nil || liveVideo != nil }

  /// Names what its renditions show: 12 hex digits of its content's hash, then 8 of the
  /// settings of an edit made elsewhere when it has one. A URL with it (`v=`) names bytes that
  /// never change, and a signed one (``RenditionSigner``) is signed for it.
  package var version: String {
    let content = contentHash.prefix(12)
    guard let settings = foreignSettings else { return String(content) }
    return content + "-" + settings.digest.prefix(8)
  }

  /// The file's name, the last part of ``path``.
  public var name: String { path.split(separator: "/").last.map(String.init) ?? path }
  /// The folder the file is in, relative to the root (`""` for the root itself).
  public var folder: String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[..<slash])
  }
}

extension Asset {
  /// The month it was taken in, on the clock where it was taken, as `year * 100 + month`
  /// (`201903`): its sort date moved by its offset (none: the date as UTC), the timeline's
  /// sections. 0 for a date outside the years 0 to 9999. The catalog's `month` column is the
  /// same arithmetic in SQLite (`strftime`, to the millisecond): the two must agree.
  public var month: Int { Self.month(ofLocalSeconds: localSortDate) }

  /// The day of the year it was taken on, on the clock where it was taken, as `month * 100 +
  /// day` (`1129`); 0 for a date outside the years 0 to 9999. The catalog's `MM-DD` of the
  /// same instant (``AssetQuery/day``).
  public var day: Int {
    guard Self.monthRange.contains(localSortDate) else { return 0 }
    let date = CaptureDate.civil(days: Int((localSortDate / 86_400).rounded(.down)))
    return date.month * 100 + date.day
  }

  /// ``sortDate`` on the clock where it was taken: its offset added (none: as it is).
  public var localSortDate: Double { sortDate + Double((captureOffsetMinutes ?? 0) * 60) }

  /// The first and last second of the years the catalog's months cover (0000 to 9999).
  static let monthRange = -62_167_219_200.0...253_402_300_799.0

  static func month(ofLocalSeconds seconds: Double) -> Int {
    guard monthRange.contains(seconds) else { return 0 }
    // To the millisecond of the Julian day, rounded as SQLite's `unixepoch` rounds (the same
    // floating-point steps), then the proleptic Gregorian calendar from days since 1970.
    let julianMilliseconds = Int64(seconds * 1000 + 210_866_760_000_000 + 0.5)
    let milliseconds = julianMilliseconds - 210_866_760_000_000
    var days = milliseconds / 86_400_000
    if milliseconds % 86_400_000 < 0 { days -= 1 }
    let date = CaptureDate.civil(days: Int(days))
    return date.year * 100 + date.month
  }
}

/// A place the library's photos were taken in, with how many and its newest that shows
/// something (``Library/places(in:)``): a country, or a town with its region and country.
package struct PlaceCount: Sendable, Codable, Equatable {
  /// The country's name, or the town's.
  package var name: String
  /// A town's region (a state, a province), when it has one.
  package var region: String?
  package var country: String
  package var count: Int
  package var poster: AssetID?

  package init(name: String, region: String?, country: String, count: Int, poster: AssetID?) {
    (self.name, self.region, self.country, self.count, self.poster) =
      (name, region, country, count, poster)
  }
}

/// How many assets a query holds in one month (``Library/months(matching:)``).
public struct MonthCount: Sendable, Codable, Equatable {
  /// `year * 100 + month`, as ``Asset/month``.
  public var month: Int
  public var count: Int
  public init(month: Int, count: Int) {
    self.month = month
    self.count = count
  }
}

extension Asset {
  /// An asset from plain values (the scan makes assets from files; this is for importers,
  /// other catalogs and benchmarks). Fields not given are empty.
  package init(
    id: AssetID = .make(), path: String, contentHash: String, identity: FileIdentity,
    mediaType: MediaType, format: String, width: Int, height: Int, sortDate: Double,
    addedAt: Double
  ) {
    self.init(
      id: id, path: path, contentHash: contentHash, byteSize: identity.size,
      identity: identity, mediaType: mediaType, format: format, width: width, height: height,
      displayWidth: width, displayHeight: height, orientation: 1, captureDate: sortDate,
      captureOffsetMinutes: nil, sortDate: sortDate, latitude: nil, longitude: nil,
      altitude: nil, camera: nil, lens: nil, exposureTime: nil, fNumber: nil, iso: nil,
      focalLength: nil, duration: nil, adjustmentVersion: 0, isFavourite: false,
      isHidden: false, trashedAt: nil, isOffline: false, addedAt: addedAt, trashedFrom: nil)
  }

  /// A new asset from what was read of a file: its metadata or its video header.
  init(
    path: String, hash: String, identity: FileIdentity, read: AssetContent, edited: Int,
    added: Double
  ) {
    self.init(
      id: .make(), path: path, contentHash: hash, byteSize: identity.size, identity: identity,
      mediaType: .photo, format: "", width: 0, height: 0, displayWidth: 0, displayHeight: 0,
      orientation: 1, captureDate: nil, captureOffsetMinutes: nil,
      sortDate: Double(identity.modified) / 1e9, latitude: nil, longitude: nil, altitude: nil,
      camera: nil, lens: nil, exposureTime: nil, fNumber: nil, iso: nil, focalLength: nil,
      duration: nil, adjustmentVersion: edited, isFavourite: false, isHidden: false,
      trashedAt: nil, isOffline: false, addedAt: added, trashedFrom: nil)
    describe(read)
  }

  /// Replaces what comes from the file's content (keeps id, favourite, hidden, trash, dates
  /// the catalog made).
  mutating func describe(_ content: AssetContent) {
    switch content {
    case .photo(let m):
      mediaType = .photo
      format = m.format
      (width, height, displayWidth, displayHeight) =
        (m.width, m.height, m.displayWidth, m.displayHeight)
      orientation = m.orientation.effective.rawValue
      captureDate = m.captureDate.map(\.secondsSince1970)
      captureOffsetMinutes = m.captureDate?.utcOffsetMinutes
      (latitude, longitude, altitude) =
        (m.location?.latitude, m.location?.longitude, m.location?.altitude)
      camera = m.cameraName
      lens = m.lensModel
      (exposureTime, fNumber, iso, focalLength) = (m.exposureTime, m.fNumber, m.iso, m.focalLength)
      duration = nil
      (caption, rating, keywords) = (m.caption, m.rating, m.keywords)
      (people, timeZone) = (m.people, m.timeZone)
      (place, region, country) = (m.place?.name, m.place?.region, m.place?.country)
      if region == "" { region = nil }
      exifThumbnail = m.exifThumbnail
      (motionVideo, liveVideo) = (m.motionVideo, m.liveVideo)
      foreignSettings = m.shownForeignSettings
      damage = m.damage.flatMap { AssetDamage($0) }
    case .video(let v):
      mediaType = .video
      format = v.format
      (width, height, displayWidth, displayHeight) =
        (v.width, v.height, v.displayWidth, v.displayHeight)
      orientation = v.rotation
      captureDate = v.creationDate
      captureOffsetMinutes = nil
      (latitude, longitude, altitude, camera, lens) = (nil, nil, nil, nil, nil)
      (exposureTime, fNumber, iso, focalLength) = (nil, nil, nil, nil)
      duration = v.duration
      (exifThumbnail, motionVideo, liveVideo, foreignSettings) = (nil, nil, nil, nil)
      damage = nil
    case .damaged(let format, let type, let damage):
      // Nothing was read of it but its format: no size (a grid shows a placeholder), no
      // date but the file's own.
      (mediaType, self.format) = (type, format)
      (width, height, displayWidth, displayHeight, orientation) = (0, 0, 0, 0, 1)
      (captureDate, captureOffsetMinutes) = (nil, nil)
      (latitude, longitude, altitude, camera, lens) = (nil, nil, nil, nil, nil)
      (exposureTime, fNumber, iso, focalLength, duration) = (nil, nil, nil, nil, nil)
      (caption, rating, keywords, people, timeZone) = (nil, nil, [], [], nil)
      (place, region, country) = (nil, nil, nil)
      (exifThumbnail, motionVideo, liveVideo, foreignSettings) = (nil, nil, nil, nil)
      self.damage = damage
    }
    damage?.isVideo = mediaType == .video
    sortDate = captureDate ?? Double(identity.modified) / 1e9
  }
}

/// What the scan read of a file's content.
enum AssetContent: Sendable {
  case photo(AssetMetadata)
  case video(VideoHeader)
  /// A file of `format` that could not be described at all: only its damage is known.
  case damaged(format: String, MediaType, AssetDamage)
}

extension CaptureDate {
  /// The day `days` after 1 January 1970, proleptic Gregorian (civil from days, Howard
  /// Hinnant's algorithm: 400-year eras of 146,097 days), the inverse of the days in
  /// ``secondsSince1970``.
  static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (
      yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month,
      dayOfYear - (153 * monthIndex + 2) / 5 + 1
    )
  }

  /// Seconds since 1970: exact with an offset, the local time read as UTC without one.
  var secondsSince1970: Double {
    // Days from civil (Howard Hinnant's algorithm), proleptic Gregorian.
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146097 + dayOfEra - 719468
    let seconds = days * 86400 + hour * 3600 + minute * 60 + second
    let fraction = subsecond.flatMap { Double("0." + $0) } ?? 0
    return Double(seconds - (utcOffsetMinutes ?? 0) * 60) + fraction
  }
}

extension Asset {
  /// When the photo was taken, as its metadata says (nil: it does not say).
  public var captured: Date? { captureDate.map { Date(timeIntervalSince1970: $0) } }
  /// When it entered the catalog.
  public var added: Date { Date(timeIntervalSince1970: addedAt) }
  /// When it went to the trash (nil: it is not there).
  public var trashed: Date? { trashedAt.map { Date(timeIntervalSince1970: $0) } }
}
