import FoundationEssentials

/// Assets as one zip archive, written as it goes (stored, not compressed: photos do not
/// shrink), so an archive of thousands of files needs no temporary file and its first bytes
/// go at once: what the server's `/api/download` streams. Each file is its catalogued bytes,
/// named by its path in the library (a trashed one by where it was).
///
/// ```swift
/// let export = try library.zipExport(of: ids)
/// try await export.write { bytes in try await socket.send(bytes) }
/// ```
///
/// Every file is checked when the export is made, so a link, a file replaced behind the
/// catalog's back or an archive past zip's limits is an error before the first byte; a file
/// that changes after that is left out, as one that is gone is.
package struct ZipExport: Sendable {
  /// The assets the archive holds, in order.
  package let assets: [Asset]
  let library: Library

  /// A name for the archive: `darkroom-N.zip`.
  package var fileName: String { "darkroom-\(assets.count).zip" }

  /// Writes the archive through `write`, a chunk at a time (at most 1 MiB each).
  ///
  /// - Throws: what `write` throws.
  package func write(_ write: ([UInt8]) async throws -> Void) async throws {
    var zip = ZipStream()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    for asset in assets {
      // Changed since the export was made: left out, as a file gone meanwhile is.
      guard let file = try? library.openFile(of: asset) else { continue }
      try await write(zip.header(asset.trashedFrom ?? asset.path))
      var crc: UInt32 = 0
      var size: UInt64 = 0
      while true {
        let n = (try? file.read(at: Int(size), into: &buffer)) ?? 0
        if n <= 0 { break }
        buffer.withUnsafeBytes {
          crc = CRC32.update(crc, UnsafeRawBufferPointer(rebasing: $0[0..<n]))
        }
        size += UInt64(n)
        try await write(Array(buffer[0..<n]))
      }
      try await write(zip.descriptor(crc: crc, size: size))
    }
    try await write(zip.end())
  }
}

extension Library {
  /// A zip archive of these assets (offline ones left out), each file checked now.
  ///
  /// - Throws: `notFound` for an unknown id; `tooLarge` past 65,535 files or 4 GiB (zip
  ///   without Zip64); what ``openFile(of:)`` throws for a file that is a link or is not the
  ///   catalogued one.
  package func zipExport(of ids: [AssetID]) throws(DarkroomError) -> ZipExport {
    let assets = try ids.map { id throws(DarkroomError) in try asset(id) }.filter { !$0.isOffline }
    guard assets.count <= ZipStream.maxEntries,
      assets.reduce(UInt64(0), { $0 + UInt64($1.byteSize) + 200 }) < ZipStream.maxBytes
    else {
      throw DarkroomError(.tooLarge, "a zip holds at most 4 GiB and 65,535 files: select fewer")
    }
    for asset in assets { _ = try openFile(of: asset) }
    return ZipExport(assets: assets, library: self)
  }
}
