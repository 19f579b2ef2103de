#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The video of a live or motion photo: a still and a few seconds of video that are one
/// asset, as PhotoKit's live photos are.
///
/// - Google's Motion Photo (and Samsung's, which writes the same XMP): an MP4 appended to the
///   JPEG or HEIC, named by XMP: `GCamera:MotionPhoto="1"` with a `Container:Directory` whose
///   `MotionPhoto` item gives the video's length (it is last in the file), or the older
///   `GCamera:MicroVideo="1"` with `GCamera:MicroVideoOffset` (its distance from the end).
/// - Samsung's older motion photo: the MP4 in its JPEG's trailer, with no XMP
///   (``samsungTrailer(_:tail:)``).
/// - Apple's Live Photo: a HEIC or JPEG and a MOV of the same name in the same folder
///   (`IMG_0001.HEIC` and `IMG_0001.MOV`), which the phone writes and exports together.
///
/// ```swift
/// if let video = metadata.motionVideo { ... }              // embedded: where in the file
/// let pair = MotionPhoto.companion(of: "/photos/IMG_0001.HEIC")  // "/photos/IMG_0001.MOV"
/// ```
package enum MotionPhoto {
  static let camera = "http://ns.google.com/photos/1.0/camera/"
  static let container = "http://ns.google.com/photos/1.0/container/"
  static let item = "http://ns.google.com/photos/1.0/container/item/"

  /// Where the embedded video of a file of `fileSize` bytes is, as its XMP says; nil when
  /// the XMP names none, or a length that does not fit in the file. The bytes there are
  /// checked when the video is read (``bytes(of:in:part:name:)``), not here: reading the
  /// metadata reads the header only.
  static func embeddedRange(_ packet: XMPPacket, fileSize: Int) -> FileRange? {
    var length: Int?
    if packet.text(camera, "MotionPhoto") == "1" {
      let items = packet.elements(container, "Item")
      if let video = items.last(where: { $0[item + "Semantic"] == "MotionPhoto" }) {
        length = video[item + "Length"].flatMap { Int($0) }
      }
    }
    if length == nil, packet.text(camera, "MicroVideo") == "1" {
      length = packet.text(camera, "MicroVideoOffset").flatMap { Int($0) }
    }
    guard let length, length >= 16, length < fileSize else { return nil }
    return FileRange(offset: fileSize - length, length: length)
  }

  /// Where the MP4 of Samsung's older motion photos is (before its phones wrote Google's
  /// XMP): in the `MotionPhoto_Data` block of the trailer Samsung's camera appends after the
  /// JPEG, whose directory ends the file. The directory is `SEFH`, a version and a count,
  /// then an entry for each block (its type, how far before the directory it starts, its
  /// size), and last its own length and `SEFT`; each block opens with its type and name.
  /// Numbers are little-endian, as ExifTool reads them. nil without one; reads the directory
  /// only (`tail`: the file's last 8 bytes, read already).
  static func samsungTrailer(_ source: ByteSource, tail end: ArraySlice<UInt8>) throws
    -> FileRange?
  {
    func number(_ bytes: ArraySlice<UInt8>, _ at: Int) -> Int {
      let p = bytes.startIndex + at
      return Int(bytes[p]) | Int(bytes[p + 1]) << 8 | Int(bytes[p + 2]) << 16
        | Int(bytes[p + 3]) << 24
    }
    guard source.count > 28, end.count == 8, end.suffix(4).elementsEqual("SEFT".utf8)
    else { return nil }
    let length = number(end, 0)
    let directory = source.count - 8 - length
    guard length >= 12, length <= 1 << 16, directory >= 0,
      let entries = try source.peek(directory, length), entries.prefix(4).elementsEqual("SEFH".utf8)
    else { return nil }
    let name = Array("MotionPhoto_Data".utf8)
    for index in 0..<min(number(entries, 8), (length - 12) / 12) {
      let entry = 12 + 12 * index
      let (back, size) = (number(entries, entry + 4), number(entries, entry + 8))
      let start = directory - back
      guard start >= 0, size > 8 + name.count, start + size <= directory,
        let head = try source.peek(start, 8 + name.count), number(head, 4) == name.count,
        head.suffix(name.count).elementsEqual(name)
      else { continue }
      return FileRange(offset: start + 8 + name.count, length: size - 8 - name.count)
    }
    return nil
  }

  /// An edit's XMP `packet` describing the motion photo its result is, whose video of
  /// `videoLength` bytes is appended, as Google's Motion Photo format 1.0 has it: a second
  /// description (before `</rdf:RDF>`) with `GCamera:MotionPhoto` and the
  /// `Container:Directory` of the still and the video. After a HEIC the video is in a
  /// top-level `mpvd` box (its 8-byte header is the item's padding), so the file stays ISO
  /// media. nil for a packet with no `</rdf:RDF>`.
  static func describing(_ packet: [UInt8], videoLength: Int, heic: Bool) -> [UInt8]? {
    let end = Array("</rdf:RDF>".utf8)
    guard packet.count >= end.count,
      let at = (0...packet.count - end.count).last(where: {
        packet[$0..<$0 + end.count].elementsEqual(end)
      })
    else { return nil }
    let description = """
      <rdf:Description rdf:about=""
        xmlns:GCamera="\(camera)" xmlns:Container="\(container)" xmlns:Item="\(item)"
        GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1"
        GCamera:MotionPhotoPresentationTimestampUs="-1">
       <Container:Directory><rdf:Seq>
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="\(heic ? "image/heic" : "image/jpeg")" Item:Semantic="Primary" Item:Length="0" Item:Padding="0"/></rdf:li>
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="video/mp4" Item:Semantic="MotionPhoto" Item:Length="\(videoLength)" Item:Padding="\(heic ? 8 : 0)"/></rdf:li>
       </rdf:Seq></Container:Directory>
      </rdf:Description>

      """
    return Array(packet[..<at]) + Array(description.utf8) + Array(packet[at...])
  }

  /// What follows an edited still to carry its motion video: the video itself after a JPEG;
  /// in a top-level `mpvd` box after a HEIC (``describing(_:videoLength:heic:)``).
  static func appended(_ video: [UInt8], heic: Bool) -> [UInt8] {
    guard heic else { return video }
    let size = video.count + 8
    let header: [UInt8] = [
      UInt8(truncatingIfNeeded: size >> 24), UInt8(truncatingIfNeeded: size >> 16),
      UInt8(truncatingIfNeeded: size >> 8), UInt8(truncatingIfNeeded: size),
    ]
    return header + Array("mpvd".utf8) + video
  }

  /// Whether `bytes` start with an ISO base media `ftyp` box.
  static func isISOMedia(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 12 else { return false }
    let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
    return size >= 8 && bytes[4..<8].elementsEqual("ftyp".utf8)
  }

  /// Extensions of the stills of a Live Photo, and of its video, as phones and cameras spell
  /// them.
  static let stillExtensions = ["HEIC", "heic", "JPG", "jpg", "JPEG", "jpeg", "HEIF", "heif"]
  static let videoExtensions = ["MOV", "mov"]

  /// The Live Photo video beside the still at `path`: a MOV of the same name in the same
  /// folder (`IMG_0001.HEIC` and `IMG_0001.MOV`); nil when there is none, or `path` is not a
  /// HEIC or JPEG. Looks for the few names it could have, never lists the folder.
  package static func companion(of path: String) -> String? {
    sibling(of: path, from: stillExtensions, to: videoExtensions)
  }

  /// The still a Live Photo video at `path` belongs to (see ``companion(of:)``), or nil.
  package static func still(of path: String) -> String? {
    sibling(of: path, from: videoExtensions, to: stillExtensions)
  }

  /// The Live Photo video of the still at `path`, whose content identifier is `identifier`
  /// (``AssetMetadata/contentIdentifier``): the MOV beside it (``companion(of:)``) when both
  /// carry the same identifier, or neither carries one; never a MOV whose identifier differs,
  /// or one of a pair where only one says which Live Photo it belongs to.
  package static func pairedCompanion(of path: String, identifier: String?) -> String? {
    guard let video = companion(of: path) else { return nil }
    return pairs(identifier, videoIdentifier(video)) ? video : nil
  }

  /// The still of the Live Photo video at `path` (``still(of:)``), if the two pair as
  /// ``pairedCompanion(of:identifier:)`` says.
  package static func pairedStill(of path: String) -> String? {
    guard let still = still(of: path) else { return nil }
    return pairs(stillIdentifier(still), videoIdentifier(path)) ? still : nil
  }

  /// Apple's rule: a pair by identifier when both have one, by name only when neither has.
  static func pairs(_ still: String?, _ video: String?) -> Bool {
    switch (still, video) {
    case (nil, nil): true
    case (let a?, let b?): a == b
    default: false
    }
  }

  /// The content identifier of the MOV at `path` (its `meta` keys), or nil.
  static func videoIdentifier(_ path: String) -> String? {
    (try? VideoHeader.read(path: path))?.contentIdentifier
  }

  /// The content identifier in the Apple maker note of the still at `path` (a JPEG's EXIF, a
  /// HEIC's `Exif` item), or nil. Only the header is parsed, in Swift; a HEIC is read whole
  /// (up to 64 MiB) for its item table.
  static func stillIdentifier(_ path: String) -> String? {
    guard let file = try? InputFile(path), file.size <= 64 << 20,
      let head = try? file.read(at: 0, count: min(file.size, 16))
    else { return nil }
    if head.starts(with: [0xFF, 0xD8, 0xFF]) {
      guard let parsed = try? ContainerHeader.parse(ByteSource(file: file)),
        let exif = parsed.exif
      else { return nil }
      return AppleMakerNote.contentIdentifier(exif: exif)
    }
    guard let bytes = try? file.read(at: 0, count: file.size), let items = HEIFItems(bytes),
      let item = items.types.first(where: { $0.value == "Exif" })?.key,
      let data = items.data(of: item), data.count > 8
    else { return nil }
    // An `Exif` item: a 4-byte offset to the TIFF header, then the block.
    let offset = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
    guard offset >= 0, 4 + offset < data.count else { return nil }
    return AppleMakerNote.contentIdentifier(exif: Array(data[(4 + offset)...]))
  }

  private static func sibling(of path: String, from: [String], to: [String]) -> String? {
    guard let (stem, ext) = FilePath(path).splitExtension, from.contains(ext) else { return nil }
    for candidate in to {
      let sibling = stem + "." + candidate
      var info = stat()
      if stat(sibling, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return sibling }
    }
    return nil
  }
}

extension MotionPhoto {
  /// Where the video of a live or motion photo is: a MOV of its own (a Live Photo's), or a
  /// range of the still's file (a motion photo's). `Video` is a `Sendable` value type.
  package struct Video: Sendable, Equatable {
    /// The file the video is in: the MOV, or the still itself.
    package var path: String
    /// The video's place in ``path``; nil: the whole file.
    package var range: FileRange?
    /// `mov` (a Live Photo's) or `mp4` (a motion photo's).
    package var format: String

    /// Its media type, for HTTP.
    package var mediaType: String { format == "mov" ? "video/quicktime" : "video/mp4" }
  }

  /// The video of the live or motion photo at `path`, found as a scan finds it (its XMP, the
  /// MOV beside it).
  ///
  /// - Throws: what reading its metadata throws; `unsupportedFormat` naming `path` when it has
  ///   no video (a still alone, a video, a file of another kind).
  package static func video(ofStill path: String) throws(DarkroomError) -> Video {
    if let still = still(of: path) {
      throw DarkroomError(
        .unsupportedFormat, file: path,
        "is the video of the Live Photo \(FilePath(still).name): ask for that photo's video")
    }
    let metadata = try AssetMetadata.read(path: path)
    guard let video = video(path: path, embedded: metadata.motionVideo, live: metadata.liveVideo)
    else { throw noVideo(path) }
    return video
  }

  /// The video of the live or motion photo at `path` (``video(ofStill:)``) and its bytes,
  /// read whole: a MOV as it is, an embedded MP4 checked to start as ISO media.
  ///
  /// - Throws: as ``video(ofStill:)``; `corrupt` for an embedded video that is not there;
  ///   what opening and reading throw (a Live Photo's MOV that cannot be read, say).
  package static func videoBytes(ofStill path: String) throws(DarkroomError)
    -> (video: Video, bytes: [UInt8])
  {
    let video = try video(ofStill: path)
    let file = try InputFile(video.path)
    return (video, try bytes(of: video, in: file, name: path))
  }

  /// The video of a still at `path` whose metadata (or catalog row) says `embedded` or
  /// `live` (a file name in its folder); nil for neither. An embedded video wins.
  static func video(path: String, embedded: FileRange?, live: String?) -> Video? {
    if let embedded { return Video(path: path, range: embedded, format: "mp4") }
    guard let live else { return nil }
    let folder = FilePath(path).parent
    return Video(path: folder.isEmpty ? live : folder + "/" + live, range: nil, format: "mov")
  }

  static func noVideo(_ path: String) -> DarkroomError {
    DarkroomError(.notFound, file: path, "has no video: it is not a live or motion photo")
  }

  /// The bytes of `video` (its `part`, counted from the video's start: nil for all of it),
  /// read from `file`, the open ``Video/path``. An embedded video is checked to start as
  /// ISO media.
  ///
  /// - Throws: `corrupt` naming `name` for an embedded video that is not there;
  ///   `invalidArgument` for a part past its end; what reading throws.
  static func bytes(
    of video: Video, in file: InputFile, part: Range<Int>? = nil, name: String
  ) throws(DarkroomError) -> [UInt8] {
    try bytes(of: video, size: file.size, part: part, name: name) {
      (offset, count) throws(DarkroomError) in try file.read(at: offset, count: count)
    }
  }

  /// The bytes of `video` (its `part`) in something of `size` bytes that `read` reads (a
  /// file, a space's sealed original), checked as above.
  static func bytes(
    of video: Video, size: Int, part: Range<Int>? = nil, name: String,
    read: (_ offset: Int, _ count: Int) throws(DarkroomError) -> [UInt8]
  ) throws(DarkroomError) -> [UInt8] {
    let whole = video.range ?? FileRange(offset: 0, length: size)
    guard whole.offset >= 0, whole.offset + whole.length <= size else {
      throw DarkroomError(
        .corrupt, file: name, "its motion photo video runs past the end of the file")
    }
    if video.range != nil {
      let head = try read(whole.offset, min(16, whole.length))
      guard isISOMedia(head) else {
        throw DarkroomError(
          .corrupt, file: name,
          "its motion photo video is damaged (no MP4 header where its metadata says it starts)")
      }
    }
    let part = part ?? 0..<whole.length
    guard part.lowerBound >= 0, part.upperBound <= whole.length else {
      throw DarkroomError(.invalidArgument, file: name, "the range \(part) is past its end")
    }
    return try read(whole.offset + part.lowerBound, part.count)
  }
}
