import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// The offline geography Darkroom consults: the nearest populated place to a position
/// (``PlaceIndex``, from GeoNames' cities1000) and the time zone there (``ZoneIndex``, from the
/// time-zone boundaries timezonefinder ships). `Scripts/install-geodata.sh` builds both files
/// from packages at set-up; nothing is fetched at run time.
///
/// ```swift
/// if let geo = GeoData.shared {
///   print(geo.places?.nearest(latitude: 39.74, longitude: -104.99)?.name ?? "-")  // Denver
///   print(geo.zones?.zone(latitude: 39.74, longitude: -104.99) ?? "-")  // America/Denver
/// }
/// ```
///
/// The folder is the first of `$DARKROOM_DATA`, `~/.local/share/darkroom`,
/// `/usr/local/share/darkroom` and `/usr/share/darkroom` that holds a file; either file may
/// be missing (a library is then catalogued without places or zones, and `info` says so).
package final class GeoData: Sendable {
  /// Places, if `places.bin` is there and sound.
  package let places: PlaceIndex?
  /// Time zones, if `zones.bin` is there and sound.
  package let zones: ZoneIndex?
  /// The folder read.
  package let folder: String
  /// Why a file that is there was not taken (damaged, another format), one line each.
  package let problems: [String]

  /// Reads the files in `folder`.
  package init(folder: String) {
    self.folder = folder
    var problems: [String] = []
    func load<T>(_ name: String, _ make: (MappedFile) throws(DarkroomError) -> T) -> T? {
      let path = folder + "/" + name
      guard access(path, F_OK) == 0 else { return nil }
      do {
        return try make(try MappedFile(path))
      } catch {
        problems.append(error.description)
        return nil
      }
    }
    places = load("places.bin", PlaceIndex.init)
    zones = load("zones.bin", ZoneIndex.init)
    self.problems = problems
  }

  /// The folders searched, in order.
  package static var searched: [String] {
    var folders: [String] = []
    if let custom = getenv("DARKROOM_DATA") { folders.append(String(cString: custom)) }
    if let home = getenv("HOME") {
      folders.append(String(cString: home) + "/.local/share/darkroom")
    }
    return folders + ["/usr/local/share/darkroom", "/usr/share/darkroom"]
  }

  /// The data of the first folder searched that has either file; nil when none has.
  package static let shared: GeoData? = {
    for folder in searched
    where access(folder + "/places.bin", F_OK) == 0 || access(folder + "/zones.bin", F_OK) == 0 {
      return GeoData(folder: folder)
    }
    return nil
  }()
}

/// A file mapped into memory, read-only, for as long as the value lives: the only owner of
/// its mapping (unmapped in `deinit`).
final class MappedFile: @unchecked Sendable {
  // Unchecked: the mapping is read-only and never changes after init, so any thread may read.
  let base: UnsafeRawPointer
  let count: Int
  let path: String

  init(_ path: String) throws(DarkroomError) {
    self.path = path
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw InputFile.errnoError(path) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else {
      throw DarkroomError(.corrupt, file: path, "is not a data file (empty or not a file)")
    }
    count = Int(info.st_size)
    guard let mapped = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED
    else { throw InputFile.errnoError(path) }
    base = UnsafeRawPointer(mapped)
  }

  deinit { munmap(UnsafeMutableRawPointer(mutating: base), count) }

  /// A little-endian 32-bit value at byte `offset` (checked by the caller's bounds).
  @inline(__always) func u32(_ offset: Int) -> UInt32 {
    UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
  }

  @inline(__always) func i32(_ offset: Int) -> Int32 {
    Int32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: Int32.self))
  }

  /// Whether the file starts with `magic`.
  func starts(with magic: String) -> Bool {
    let bytes = Array(magic.utf8)
    return count >= bytes.count
      && bytes.indices.allSatisfy { base.load(fromByteOffset: $0, as: UInt8.self) == bytes[$0] }
  }

  /// The NUL-terminated UTF-8 string at `offset`, within `range`, and its length in the
  /// file (bytes before the NUL: damaged UTF-8 is repaired in the string, not in the count);
  /// nil past its end.
  func string(at offset: Int, within range: Range<Int>) -> (String, Int)? {
    guard range.contains(offset) else { return nil }
    var end = offset
    while end < range.upperBound, base.load(fromByteOffset: end, as: UInt8.self) != 0 { end += 1 }
    guard end < range.upperBound else { return nil }
    let buffer = UnsafeRawBufferPointer(start: base + offset, count: end - offset)
    return (String(decoding: buffer, as: UTF8.self), end - offset)
  }

  func damaged(_ why: String) -> DarkroomError {
    DarkroomError(.corrupt, file: path, "is damaged (\(why)): run Scripts/install-geodata.sh again")
  }
}

/// The grid both indexes share: one-degree cells, 360 columns from 180°W and 180 rows from
/// 90°S.
enum GeoGrid {
  static let columns = 360
  static let rows = 180
  static let cells = columns * rows

  @inline(__always) static func row(_ latitude: Double) -> Int {
    min(rows - 1, max(0, Int((latitude + 90).rounded(.down))))
  }

  @inline(__always) static func column(_ longitude: Double) -> Int {
    min(columns - 1, max(0, Int((longitude + 180).rounded(.down))))
  }
}
