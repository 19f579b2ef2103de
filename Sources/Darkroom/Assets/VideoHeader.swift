/// What a video container's header says, read without a decoder: the container, the length,
/// the stored size and rotation of the first video track, and when the video was made.
///
/// ISO base media files (MP4, QuickTime MOV, M4V, 3GP) keep all of this in their `moov` box,
/// which may come before or after the media data. Only box headers and the `moov` box are
/// read, so this is cheap even for a file of many gigabytes.
///
/// ```swift
/// let video = try VideoHeader.read(path: "IMG_0002.MOV")
/// print(video.format, video.duration, video.displayWidth, video.displayHeight)
/// ```
///
/// `VideoHeader` is a `Sendable` value type.
package struct VideoHeader: Sendable, Equatable {
  /// The container: `mp4`, `mov`, `m4v` or `3gp`, by the major brand of the `ftyp` box
  /// (`mov` also for an old QuickTime file, which has none).
  package var format: String
  /// The length in seconds, from the movie header (`mvhd`), or from the video track's media
  /// header (`mdhd`) when the movie header gives none; 0 when neither does (a fragmented
  /// file may leave both at 0).
  package var duration: Double
  /// The width of the first video track as stored, before ``rotation``.
  package var width: Int
  /// The height of the first video track as stored, before ``rotation``.
  package var height: Int
  /// How far the stored frames turn clockwise to show upright: 0, 90, 180 or 270 degrees,
  /// from the video track's matrix (0 for a matrix that is no such turn).
  package var rotation: Int
  /// When the video was made, in seconds since 1970-01-01 UTC, from the movie header; nil
  /// when the header leaves it unset.
  package var creationDate: Double?
  /// How the first video track codes its colour (the `nclx` of its sample entry's `colr`
  /// box: primaries, transfer; HDR when PQ or HLG); nil when it does not say.
  package var colour: CodedColour?
  /// The first video track's codec, as its sample entry names it (`avc1` or `avc3` for
  /// H.264, `hvc1` or `hev1` for HEVC, `av01`, ...); nil when it cannot be read.
  package var codec: String?
  /// The first sound track's codec, as its sample entry names it (`mp4a` for AAC, `lpcm`,
  /// `sowt`, `Opus`, ...); nil for a video without sound.
  package var soundCodec: String?
  /// Apple's `com.apple.quicktime.content.identifier` (the movie's `meta` keys): the UUID a
  /// Live Photo's MOV shares with its still (``AppleMakerNote``); nil when it has none.
  package var contentIdentifier: String?

  /// The width as shown, after ``rotation``.
  package var displayWidth: Int { rotation % 180 == 0 ? width : height }
  /// The height as shown, after ``rotation``.
  package var displayHeight: Int { rotation % 180 == 0 ? height : width }
}

extension VideoHeader {
  /// Whether the first bytes are an ISO media file this reader takes (ftyp with a video brand,
  /// or an old QuickTime first box). Used to recognise videos by content.
  ///
  /// An `ftyp` box whose major brand is an image's (HEIF, AVIF, Canon CR3, JPEG 2000) or an
  /// audio file's (M4A, M4B) is not a video. Give at least the first 12 bytes.
  package static func recognises(_ head: ArraySlice<UInt8>) -> Bool {
    format(of: Array(head.prefix(12))) != nil
  }

  /// Parses the header of the file at `path`, reading only box headers and the moov box
  /// (bounded: refuse a moov larger than 64 MiB), with pread.
  ///
  /// - Throws: A ``DarkroomError`` about `path`: `notFound`, `isDirectory`, `unreadable`,
  ///   `unsupportedFormat` or `empty` for a file that cannot be opened; `unsupportedFormat`
  ///   for a file that is not an ISO media video, or one with no video track; `corrupt` for
  ///   a damaged header (box sizes that do not add up, boxes nested too deep or too many, a
  ///   `moov` box over 64 MiB); `io` for a failed read.
  package static func read(path: String) throws(DarkroomError) -> VideoHeader {
    try read(ByteSource(file: InputFile(path)), name: path)
  }

  /// The header of the file at `path` if its first bytes say it is a video; nil if they
  /// do not (a photo, or anything else).
  ///
  /// - Throws: what ``read(path:)`` throws, for a file that looks like a video.
  package static func describe(path: String) throws(DarkroomError) -> VideoHeader? {
    try describe(InputFile(path), name: path)
  }

  /// The header of an open file if its first bytes say it is a video; nil if they do not.
  /// Errors name `name`.
  static func describe(_ file: InputFile, name: String) throws(DarkroomError) -> VideoHeader? {
    guard try recognises(file) else { return nil }
    return try read(ByteSource(file: file), name: name)
  }

  /// Whether an open file's first bytes say it is a video.
  static func recognises(_ file: InputFile) throws(DarkroomError) -> Bool {
    recognises(try file.read(at: 0, count: min(file.size, 64))[...])
  }

  /// Parses the header in `source`, a file or bytes in memory; errors name `name`.
  static func read(_ source: ByteSource, name: String) throws(DarkroomError) -> VideoHeader {
    do {
      return try parse(source)
    } catch let error as DarkroomError {
      throw error.file == nil ? error.about(name) : error
    } catch {
      throw DarkroomError(.io, file: name, "cannot read: \(error)")
    }
  }

  /// Old QuickTime files start with one of these boxes instead of `ftyp`.
  private static let quickTimeFirstBoxes: Set<String> = ["moov", "mdat", "wide", "free"]

  /// Major brands of ISO media files that are not videos: HEIF and AVIF images, Canon CR3,
  /// JPEG 2000, and audio.
  private static let otherBrands: Set<String> = [
    "avif", "avis", "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "mif2", "msf1",
    "crx ", "jp2 ", "jpx ", "jpm ", "M4A ", "M4B ", "M4P ", "F4A ", "F4B ",
  ]

  /// The format the first 12 bytes announce, or nil for anything this reader does not take.
  static func format(of head: [UInt8]) -> String? {
    guard head.count >= 8 else { return nil }
    let type = fourCC(head[4..<8])
    guard type == "ftyp" else { return quickTimeFirstBoxes.contains(type) ? "mov" : nil }
    guard head.count >= 12 else { return nil }
    let brand = fourCC(head[8..<12])
    if otherBrands.contains(brand) { return nil }
    if brand == "qt  " { return "mov" }
    if brand.hasPrefix("M4V") { return "m4v" }
    if brand.hasPrefix("3gp") || brand.hasPrefix("3g2") { return "3gp" }
    return "mp4"
  }

  /// A box type as text: printable ASCII kept, any other byte shown as `?`.
  fileprivate static func fourCC(_ bytes: ArraySlice<UInt8>) -> String {
    String(bytes.map { (0x20...0x7E).contains($0) ? Character(UnicodeScalar($0)) : "?" })
  }

  /// Clockwise degrees for a track matrix's rotation part (a, b, c, d). Only the signs
  /// count, so a scaled turn is still a turn; anything else (a mirror, a skew) is 0.
  static func rotation(_ a: Int32, _ b: Int32, _ c: Int32, _ d: Int32) -> Int {
    switch (a.signum(), b.signum(), c.signum(), d.signum()) {
    case (0, 1, -1, 0): 90
    case (-1, 0, 0, -1): 180
    case (0, -1, 1, 0): 270
    default: 0
    }
  }

  private static func parse(_ source: ByteSource) throws -> VideoHeader {
    guard source.count > 0 else { throw DarkroomError(.empty, "empty input (0 bytes)") }
    guard let head = try source.peek(0, min(12, source.count)),
      let format = Self.format(of: Array(head))
    else {
      throw DarkroomError(.unsupportedFormat, "not a video: no MP4, MOV, M4V or 3GP header")
    }
    var reader = VideoBoxReader(format: format)
    // Walk the top-level boxes to the moov box, reading only their headers: the media data
    // (mdat) before it may be gigabytes.
    var offset = 0
    while source.count - offset >= 8 {
      let box = try reader.box(in: source, at: offset, end: source.count, parent: nil)
      if box.type == "moov" { return try reader.movie(source, box) }
      offset = box.end
    }
    throw reader.damaged("the file has no moov box")
  }
}

/// One box: its type, and where its header, contents and end are in the source.
private struct Box {
  var type: String
  var start: Int
  var contents: Int
  var end: Int
}

/// The creation time, time scale and duration of a movie (`mvhd`) or media (`mdhd`) header.
private struct Timing {
  var creation: UInt64
  var timescale: UInt64
  var duration: UInt64?

  /// The duration in seconds, or nil when it is unset or unknown.
  var seconds: Double? {
    guard let duration, duration > 0, timescale > 0 else { return nil }
    return Double(duration) / Double(timescale)
  }
}

/// The boxes of one file, read with limits on their number and nesting (a hostile file
/// could otherwise make the walk long or deep).
private struct VideoBoxReader {
  static let maxBoxes = 10_000
  static let maxDepth = 8
  /// Seconds from 1904-01-01, QuickTime's epoch, to 1970-01-01.
  static let epochOffset = 2_082_844_800.0

  let format: String
  private var boxCount = 0

  init(format: String) { self.format = format }

  /// The error for a header that makes no sense.
  func damaged(_ problem: String) -> DarkroomError {
    DarkroomError(.corrupt, "damaged \(format.uppercased()) header: \(problem)")
  }

  /// The box whose header starts at `offset`, in a parent (nil: the file) ending at `end`.
  /// Needs `end - offset >= 8`.
  mutating func box(
    in source: ByteSource, at offset: Int, end: Int, parent: String?
  ) throws -> Box {
    boxCount += 1
    guard boxCount <= Self.maxBoxes else {
      throw damaged("more than \(Self.maxBoxes) boxes")
    }
    guard end - offset >= 8, let header = try source.peek(offset, 8) else {
      throw damaged("a box header runs past the end of \(place(parent))")
    }
    let type = VideoHeader.fourCC(header.dropFirst(4))
    let size32 = bigEndian(header.prefix(4))
    var contents = offset + 8
    let size: Int
    switch size32 {
    case 0:  // to the end of the file (or of the parent)
      size = end - offset
    case 1:  // a 64-bit size follows the type
      guard end - offset >= 16, let large = try source.peek(offset + 8, 8) else {
        throw damaged("box '\(type)' runs past the end of \(place(parent))")
      }
      let value = bigEndian(large)
      guard value >= 16 else {
        throw damaged("box '\(type)' has size \(value), smaller than its 16-byte header")
      }
      guard value <= UInt64(end - offset) else {
        throw damaged("box '\(type)' runs past the end of \(place(parent))")
      }
      size = Int(value)
      contents = offset + 16
    case 2..<8:
      throw damaged("box '\(type)' has size \(size32), smaller than its 8-byte header")
    default:
      guard size32 <= UInt64(end - offset) else {
        throw damaged("box '\(type)' runs past the end of \(place(parent))")
      }
      size = Int(size32)
    }
    return Box(type: type, start: offset, contents: contents, end: offset + size)
  }

  private func place(_ parent: String?) -> String {
    parent.map { "its parent box '\($0)'" } ?? "the file"
  }

  /// The boxes directly inside `parent`, in order. Fewer than 8 bytes left over at the end
  /// (QuickTime's zero terminator) are ignored.
  mutating func children(
    of parent: Box, in source: ByteSource, depth: Int
  ) throws -> [Box] {
    guard depth <= Self.maxDepth else {
      throw damaged("boxes nested more than \(Self.maxDepth) deep")
    }
    var boxes: [Box] = []
    var offset = parent.contents
    while parent.end - offset >= 8 {
      let box = try box(in: source, at: offset, end: parent.end, parent: parent.type)
      boxes.append(box)
      offset = box.end
    }
    return boxes
  }

  /// Reads the moov box into memory (at most 64 MiB) and describes the movie.
  mutating func movie(_ file: ByteSource, _ moov: Box) throws -> VideoHeader {
    let length = moov.end - moov.contents
    guard length <= ByteSource.headerLimit else {
      throw DarkroomError(
        .corrupt,
        "\(format.uppercased()) header is larger than \(ByteSource.headerLimit >> 20) MiB "
          + "(a moov box of \(length) bytes)")
    }
    guard let bytes = try file.peek(moov.contents, length) else {
      throw damaged("box 'moov' runs past the end of the file")
    }
    let source = ByteSource(memory: Array(bytes))
    let root = Box(type: "moov", start: 0, contents: 0, end: source.count)
    var movieTiming: Timing?
    var video: Track?
    var sound: String?
    var identifier: String?
    for child in try children(of: root, in: source, depth: 1) {
      switch child.type {
      // An iPhone keeps its keys in moov/meta; FFmpeg (use_metadata_tags) in moov/udta/meta.
      case "meta" where identifier == nil:
        identifier = VideoHeader.contentIdentifier(
          meta: (try? source.bytes(child.contents, child.end - child.contents)) ?? nil)
      case "udta" where identifier == nil:
        if let meta = try children(of: child, in: source, depth: 2).first(where: {
          $0.type == "meta"
        }) {
          identifier = VideoHeader.contentIdentifier(
            meta: (try? source.bytes(meta.contents, meta.end - meta.contents)) ?? nil)
        }
      case "mvhd" where movieTiming == nil:
        movieTiming = try timing(child, in: source)
      case "trak" where video == nil || sound == nil:
        if video == nil, let track = try videoTrack(child, in: source) {
          video = track
        } else if sound == nil {
          sound = try? soundCodec(child, in: source)
        }
      default:
        break
      }
    }
    guard let video else {
      throw DarkroomError(.unsupportedFormat, "\(format.uppercased()) file has no video track")
    }
    // The media header is read only when the movie header gives no duration.
    var duration = movieTiming?.seconds
    if duration == nil, let mediaHeader = video.mediaHeader {
      duration = try timing(mediaHeader, in: source).seconds
    }
    let creation = movieTiming?.creation ?? 0
    return VideoHeader(
      format: format, duration: duration ?? 0,
      width: video.width, height: video.height, rotation: video.rotation,
      creationDate: creation == 0 ? nil : Double(creation) - Self.epochOffset, colour: video.colour,
      codec: video.codec, soundCodec: sound, contentIdentifier: identifier)
  }

  typealias Track = (
    width: Int, height: Int, rotation: Int, mediaHeader: Box?, colour: CodedColour?, codec: String?
  )

  /// The sample entry type of `trak` when it is a sound track (`hdlr` `soun`), else nil.
  private mutating func soundCodec(_ trak: Box, in source: ByteSource) throws -> String? {
    guard
      let media = try children(of: trak, in: source, depth: 2).first(where: { $0.type == "mdia" })
    else { return nil }
    let parts = try mediaParts(media, in: source)
    guard parts.handler == "soun", let information = parts.information else { return nil }
    return try sampleEntry(in: information, source)?.type
  }

  /// A track's `mdia` box's handler type (`vide`, `soun`, ...), its media header (`mdhd`) and
  /// its media information (`minf`), the first of each.
  private mutating func mediaParts(_ media: Box, in source: ByteSource) throws -> (
    handler: String?, mediaHeader: Box?, information: Box?
  ) {
    var handler: String?
    var mediaHeader: Box?
    var information: Box?
    for child in try children(of: media, in: source, depth: 3) {
      switch child.type {
      case "minf" where information == nil:
        information = child
      case "hdlr" where handler == nil:
        // version and flags, pre_defined, then the handler type
        let fields = try contents(child, in: source, atLeast: 12)
        handler = VideoHeader.fourCC(fields.dropFirst(8).prefix(4))
      case "mdhd" where mediaHeader == nil:
        mediaHeader = child
      default:
        break
      }
    }
    return (handler, mediaHeader, information)
  }

  /// The first sample entry of a track's `minf/stbl/stsd`, or nil.
  private mutating func sampleEntry(in information: Box, _ source: ByteSource) throws -> Box? {
    func child(_ type: String, of box: Box, depth: Int) throws -> Box? {
      try children(of: box, in: source, depth: depth).first { $0.type == type }
    }
    guard let table = try child("stbl", of: information, depth: 4),
      let descriptions = try child("stsd", of: table, depth: 5),
      descriptions.end - descriptions.contents >= 16
    else { return nil }
    return try box(
      in: source, at: descriptions.contents + 8, end: descriptions.end, parent: "stsd")
  }

  /// The size and rotation of `trak`, and its media header (`mdhd`), or nil when it is no
  /// video track.
  private mutating func videoTrack(
    _ trak: Box, in source: ByteSource
  ) throws -> Track? {
    var header: Box?
    var media: Box?
    for child in try children(of: trak, in: source, depth: 2) {
      if child.type == "tkhd" && header == nil { header = child }
      if child.type == "mdia" && media == nil { media = child }
    }
    guard let media else { return nil }
    let (handler, mediaHeader, information) = try mediaParts(media, in: source)
    guard handler == "vide" else { return nil }
    guard let header else { throw damaged("the video track has no 'tkhd' box") }
    let fields = try contents(header, in: source, atLeast: 4)
    let version = fields[fields.startIndex]
    guard version <= 1 else {
      throw damaged("box 'tkhd' has unknown version \(version)")
    }
    // version and flags; times, track ID, reserved, duration; reserved, layer, alternate
    // group, volume, reserved; then the matrix (nine 32-bit values) and the 16.16 size.
    let matrix = 4 + (version == 1 ? 32 : 20) + 16
    guard fields.count >= matrix + 44 else { throw damaged("box 'tkhd' is too short") }
    let value = { (index: Int) -> UInt64 in
      let start = fields.startIndex + matrix + 4 * index
      return bigEndian(fields[start..<start + 4])
    }
    let signed = { (index: Int) in Int32(truncatingIfNeeded: value(index)) }
    return (
      width: Int(value(9) >> 16), height: Int(value(10) >> 16),
      rotation: VideoHeader.rotation(signed(0), signed(1), signed(3), signed(4)),
      mediaHeader: mediaHeader, colour: information.flatMap { try? colour(in: $0, source) },
      codec: information.flatMap { try? sampleEntry(in: $0, source)?.type }
    )
  }

  /// The `nclx` colour of the first sample entry (`minf/stbl/stsd`), or nil. What it says is
  /// described, not required: a track without it, or with a sample entry this reader does
  /// not follow, has none.
  private mutating func colour(in information: Box, _ source: ByteSource) throws -> CodedColour? {
    func child(_ type: String, of box: Box, depth: Int) throws -> Box? {
      try children(of: box, in: source, depth: depth).first { $0.type == type }
    }
    // stsd: version and flags, an entry count, then the entries; a visual sample entry has
    // 78 bytes of its own fields before its boxes (ISO 14496-12, 12.1.3).
    guard let entry = try sampleEntry(in: information, source) else { return nil }
    let fields = entry.contents + 78
    guard entry.end - fields >= 8 else { return nil }
    let inner = Box(type: entry.type, start: entry.start, contents: fields, end: entry.end)
    guard let colr = try child("colr", of: inner, depth: 6),
      let payload = try source.bytes(colr.contents, colr.end - colr.contents)
    else { return nil }
    return CodedColour.nclx(payload)
  }

  /// The timing fields of an `mvhd` or `mdhd` box, version 0 (32-bit) or 1 (64-bit).
  private func timing(_ box: Box, in source: ByteSource) throws -> Timing {
    let fields = try contents(box, in: source, atLeast: 4)
    let p = fields.startIndex + 4
    func field(_ offset: Int, _ length: Int) -> UInt64 {
      bigEndian(fields[p + offset..<p + offset + length])
    }
    switch fields[fields.startIndex] {
    case 0:
      guard fields.count >= 4 + 16 else { throw damaged("box '\(box.type)' is too short") }
      let duration = field(12, 4)
      return Timing(
        creation: field(0, 4), timescale: field(8, 4),
        duration: duration == 0xFFFF_FFFF ? nil : duration)
    case 1:
      guard fields.count >= 4 + 28 else { throw damaged("box '\(box.type)' is too short") }
      let duration = field(20, 8)
      return Timing(
        creation: field(0, 8), timescale: field(16, 4),
        duration: duration == UInt64.max ? nil : duration)
    case let version:
      throw damaged("box '\(box.type)' has unknown version \(version)")
    }
  }

  /// The contents of `box`, which must be at least `count` bytes.
  private func contents(
    _ box: Box, in source: ByteSource, atLeast count: Int
  ) throws -> ArraySlice<UInt8> {
    guard box.end - box.contents >= count,
      let bytes = try source.bytes(box.contents, box.end - box.contents)
    else {
      throw damaged("box '\(box.type)' is too short")
    }
    return bytes
  }
}

extension VideoHeader {
  static let contentIdentifierKey = "com.apple.quicktime.content.identifier"

  /// The content identifier in a movie's `meta` box contents: its `keys` box names the key
  /// (`mdta` namespace), its `ilst` box holds the item with the key's index, whose `data`
  /// (UTF-8, type 1) is the value. QuickTime's `meta` holds its boxes at once; ISO's (a full
  /// box) after 4 bytes of version and flags. Bounded: 1024 keys, and every size checked.
  static func contentIdentifier(meta: ArraySlice<UInt8>?) -> String? {
    guard let meta else { return nil }
    let b = Array(meta)
    func u32(_ at: Int) -> Int? {
      at >= 0 && at + 4 <= b.count ? Int(bigEndian(b[at..<at + 4])) : nil
    }
    func type(_ at: Int) -> String? {
      at >= 0 && at + 4 <= b.count ? String(decoding: b[at..<at + 4], as: UTF8.self) : nil
    }
    var at = type(4) != "hdlr" && type(8) == "hdlr" ? 4 : 0
    var wanted: Int?
    var list: Range<Int>?
    while let size = u32(at), size >= 8, at + size <= b.count {
      if type(at + 4) == "keys", let count = u32(at + 12) {
        var key = at + 16
        for index in 1...max(1, min(count, 1024)) where index <= count {
          guard let length = u32(key), length >= 8, key + length <= at + size else { break }
          let name = String(decoding: b[key + 8..<key + length], as: UTF8.self)
          if type(key + 4) == "mdta", name == contentIdentifierKey { wanted = index }
          key += length
        }
      }
      if type(at + 4) == "ilst" { list = at + 8..<at + size }
      at += size
    }
    guard let wanted, let list else { return nil }
    var item = list.lowerBound
    while let size = u32(item), size >= 8, item + size <= list.upperBound {
      // The item's type is the key's index; its first box is `data`: size, type, a type
      // indicator (1: UTF-8), a locale, then the value.
      if u32(item + 4) == wanted, let data = u32(item + 8), data >= 16, type(item + 12) == "data",
        item + 8 + data <= item + size, u32(item + 16) == 1
      {
        let text = String(decoding: b[item + 24..<item + 8 + data], as: UTF8.self)
        return text.isEmpty ? nil : text
      }
      item += size
    }
    return nil
  }
}

/// A big-endian unsigned number of up to 8 bytes.
private func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
  bytes.reduce(0) { $0 << 8 | UInt64($1) }
}
