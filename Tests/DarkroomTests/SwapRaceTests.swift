import Foundation
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// A catalogued photo swapped, again and again, for a symbolic link and for a hard link to a
/// private file outside the library while a client asks for it every way it can: not one
/// byte of the outside file may ever be sent.
@Suite("A file swapped under the server", .timeLimit(.minutes(5)), .offThePool)
struct SwapRaceTests {
  /// A uniform JPEG of `level` in each band (R, G, B), 160x120.
  static func uniform(_ path: String, _ levels: [Int], in folder: TemporaryFolder) throws {
    let vips = "/usr/bin/vips"
    let black = folder.file("black-\(levels.map(String.init).joined(separator: "-")).v")
    let tinted = black + ".tinted.v"
    #expect(
      try CLI.run(["black", black, "160", "120", "--bands", "3"], executable: vips).status == 0)
    #expect(
      try CLI.run(
        ["linear", black, tinted, "1 1 1", levels.map(String.init).joined(separator: " ")],
        executable: vips
      ).status == 0)
    #expect(try CLI.run(["cast", tinted, path + "[Q=95]", "uchar"], executable: vips).status == 0)
  }

  /// A library of one photo, `a.jpg` (blue-grey), scanned, and a private file outside it on
  /// the same file system (so that a hard link can be made), red.
  static func library() async throws -> (ServedLibrary, AssetID, outside: String) {
    let folder = try TemporaryFolder()
    let root = folder.file("library")
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    try uniform(root + "/a.jpg", [60, 90, 160], in: folder)
    let outside = folder.file("private.jpg")
    try uniform(outside, [240, 10, 10], in: folder)
    #expect(chmod(outside, 0o600) == 0)
    let library = try Library.create(at: root)
    _ = try await library.scan()
    let served = ServedLibrary(over: library, in: folder)
    return (served, try #require(try served.ids().first), outside)
  }

  @Test(
    "a photo swapped thousands of times for a link and a hard link to a private file outside: renditions, full, download and zip send none of its bytes"
  )
  func swappedPhotoLeaksNothing() async throws {
    let (served, id, outside) = try await Self.library()
    let root = served.root
    let inside = try Fixture.bytes(root + "/a.jpg")
    let secret = try Fixture.bytes(outside)
    let outsideBefore = try Self.status(outside)
    #expect(inside != secret)

    // The swapper: the photo's name becomes a link, then a hard link, to the private file,
    // and the photo comes back, until the client is done (and at least 2,000 times).
    let done = Locked(false)
    let swaps = Locked(0)
    let photo = root + "/a.jpg"
    let kept = root + "/.a.jpg.kept"
    let swapper = Thread {
      var count = 0
      while !done.withLock({ $0 }) || count < 2_000 {
        rename(photo, kept)
        if count % 2 == 0 { symlink(outside, photo) } else { link(outside, photo) }
        sched_yield()
        unlink(photo)
        rename(kept, photo)
        usleep(200)  // the photo in place for a while too: most requests find it
        count += 1
        if count % 64 == 0 { swaps.withLock { $0 = count } }
      }
      swaps.withLock { $0 = count }
    }
    swapper.start()
    defer { done.withLock { $0 = true } }

    let found = Locked<(statuses: [Int: Int], leaks: [String])>(([:], []))
    var configuration = served.configuration()
    configuration.rateLimit = 0
    try await served.test(configuration) { client, _ in
      var statuses: [Int: Int] = [:]
      var leaks: [String] = []
      defer { found.withLock { $0 = (statuses, leaks) } }
      for round in 0..<150 {
        // A new size each time: each is a render from the file, not a cache hit.
        let size = 24 + round
        let thumbnail = try await client.execute(
          uri: "/api/assets/\(id.rawValue)/thumbnail?size=\(size)", method: .get,
          headers: ServedLibrary.write)
        statuses[thumbnail.status.code, default: 0] += 1
        if thumbnail.status == .ok {
          let pixel = try centrePixel(thumbnail.bytes)
          if pixel[0] > pixel[2] { leaks.append("thumbnail \(size): \(pixel)") }
        }
        for rep in ["full", "fullscreen"] {
          let response = try await client.execute(
            uri: "/api/assets/\(id.rawValue)/\(rep)", method: .get, headers: ServedLibrary.write)
          statuses[response.status.code, default: 0] += 1
          if response.status == .ok {
            if rep == "full", response.bytes != inside { leaks.append("full: other bytes") }
            if rep == "fullscreen", try centrePixel(response.bytes)[0] > 128 {
              leaks.append("fullscreen")
            }
          }
        }
        let zip = try await client.execute(
          uri: "/api/download", method: .post, headers: ServedLibrary.write,
          body: jsonBody(["ids": [id.rawValue]]))
        statuses[zip.status.code, default: 0] += 1
        // The archive's one entry is stored as it is: the photo's bytes, whole.
        // (An empty archive, 22 bytes, when the photo was away as it was written.)
        if zip.status == .ok, zip.bytes.count != 22, !Self.contains(zip.bytes, inside) {
          leaks.append("zip of \(zip.bytes.count) bytes")
        }
      }
    }
    done.withLock { $0 = true }
    while !swapper.isFinished { usleep(1_000) }
    let (statuses, leaks) = found.withLock { $0 }
    #expect(leaks == [], "\(statuses)")
    #expect(statuses.keys.allSatisfy { $0 < 500 }, "no 5xx: \(statuses)")
    #expect(swaps.withLock { $0 } >= 2_000)
    // The photo is as it was, and so is the private file.
    #expect(try Fixture.bytes(photo) == inside)
    #expect(try Fixture.bytes(outside) == secret)
    // The private file as it was: its mode, owner, one link and modification time.
    #expect(try Self.status(outside) == outsideBefore)
    #expect(try Self.status(photo).links == 1)
  }

  @Test(
    "edits and previews by id while the photo is swapped for a link to a private file: no response, original kept or result made holds its pixels"
  )
  func swappedPhotoNeverEdited() async throws {
    let (served, id, outside) = try await Self.library()
    let root = served.root
    let secret = try Fixture.bytes(outside)
    let outsideBefore = try Self.status(outside)

    let done = Locked(false)
    let photo = root + "/a.jpg"
    let kept = root + "/.a.jpg.kept"
    let swapper = Thread {
      var count = 0
      while !done.withLock({ $0 }) || count < 1_000 {
        // Only while the photo is there (an edit may have replaced it meanwhile). Links
        // only: a hard link to a file outside, made in the library, is a file of the library
        // to the scan that catalogues it after an edit (see the note on issue 53).
        if rename(photo, kept) == 0 {
          symlink(outside, photo)
          sched_yield()
          unlink(photo)
          rename(kept, photo)
        }
        usleep(200)
        count += 1
      }
    }
    swapper.start()
    defer { done.withLock { $0 = true } }

    var configuration = served.configuration()
    configuration.rateLimit = 0
    let found = Locked<(statuses: [Int: Int], leaks: [String])>(([:], []))
    try await served.test(configuration) { client, _ in
      var statuses: [Int: Int] = [:]
      var leaks: [String] = []
      defer { found.withLock { $0 = (statuses, leaks) } }
      for round in 0..<150 {
        let preview = try await client.execute(
          uri: "/api/assets/\(id.rawValue)/preview", method: .post, headers: ServedLibrary.write,
          body: jsonBody(["filters": ["crop aspect=1:1"], "size": 64 + round]))
        statuses[preview.status.code, default: 0] += 1
        if preview.status == .ok, try centrePixel(preview.bytes)[0] > 128 {
          leaks.append("preview \(round)")
        }
        let edit = try await client.execute(
          uri: "/api/assets/\(id.rawValue)/edit", method: .post, headers: ServedLibrary.write,
          body: jsonBody(["filters": ["crop aspect=\(4 + round % 3):\(3 + round % 2)"]]))
        statuses[edit.status.code, default: 0] += 1
      }
    }
    done.withLock { $0 = true }
    while !swapper.isFinished { usleep(1_000) }
    let (statuses, leaks) = found.withLock { $0 }
    #expect(leaks == [], "\(statuses)")
    #expect(statuses.keys.allSatisfy { $0 < 500 }, "no 5xx: \(statuses)")
    #expect((statuses[200] ?? 0) > 0, "some edits and previews went through: \(statuses)")
    // Nothing in the library (its file, the originals kept, results, renditions cached) is
    // the private file or shows its pixels.
    var images = 0
    for (path, bytes) in try filesUnder(root) where bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
      #expect(bytes != secret, "\(path)")
      #expect(try centrePixel(bytes)[0] <= 128, "\(path) shows the private file")
      images += 1
    }
    #expect(images >= 1, "the photo at least was looked at")
    #expect(try Fixture.bytes(outside) == secret)
    #expect(try Self.status(outside) == outsideBefore)
  }

  /// A file's mode, owner, link count and modification time (nanoseconds).
  struct Status: Equatable {
    var mode: mode_t
    var owner: uid_t
    var links: Int
    var modified: Int
  }

  static func status(_ path: String) throws -> Status {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw DarkroomError(.io, file: path, "cannot stat") }
    return Status(
      mode: info.st_mode, owner: info.st_uid, links: Int(info.st_nlink),
      modified: info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec)
  }

  static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
    guard bytes.count >= needle.count else { return false }
    for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
      if Array(bytes[start..<start + needle.count]) == needle { return true }
    }
    return false
  }
}
