import Foundation
import Testing

@Suite("darkroom info", .timeLimit(.minutes(10)), .offThePool)
struct InfoCommandTests {
  @Test(
    "--json prints one array in argument order with stable fields; a bad file gets an error entry")
  func jsonWithFailure() throws {
    let folder = try Fixture.temporaryFolder()
    let text = try folder.write("notes.txt", Array("plain text".utf8))
    let result = try CLI.run([
      "info", "--json", Fixture.sample("gps.jpg"), text, Fixture.sample("alpha.png"),
    ])
    #expect(result.status == 1)
    #expect(result.stderr == "darkroom: \(text): not an image in any format Darkroom reads\n")
    let array = try #require(
      try JSONSerialization.jsonObject(with: result.stdoutData) as? [[String: Any]])
    #expect(array.count == 3)
    #expect(array[0]["file"] as? String == Fixture.sample("gps.jpg"))
    #expect(array[0]["captureDate"] as? String == "2023-12-31T23:59:58.250-03:00")
    let gps = try #require(array[0]["gps"] as? [String: Any])
    #expect(gps["latitude"] as? Double == -22.951916)
    #expect(array[1]["errorKind"] as? String == "unsupported-format")
    #expect(array[1]["file"] as? String == text)
    #expect(array[2]["hasAlpha"] as? Bool == true)
    #expect(array[2]["orientationStatus"] as? String == "absent")
    // Every documented field is present, null when the file does not say.
    let fields: Set = [
      "file", "format", "byteSize", "width", "height", "displayWidth", "displayHeight",
      "orientation", "orientationStatus", "orientationRaw", "hasAlpha", "captureDate", "gps",
      "cameraMake", "cameraModel", "lensMake", "lensModel", "exposureTime", "fNumber", "iso",
      "focalLength", "iccProfile", "codedColour", "damage", "damageMessage", "caption", "rating",
      "keywords",
      "sources", "warnings", "localDateTime", "captureInstant", "timeZone", "place", "people",
      "exifThumbnail", "motionVideo", "liveVideo", "foreignEdit",
    ]
    #expect(Set(array[0].keys) == fields)
    #expect(Set(array[2].keys) == fields)
    #expect(array[2]["gps"] is NSNull)
  }

  @Test("the table names each field; success exits 0")
  func table() throws {
    let result = try CLI.run(["info", Fixture.sample("orientation-6.jpg")])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    #expect(result.stdout.contains("Orientation   6 (rotate 90° clockwise)"))
    #expect(result.stdout.contains("Stored size   400 x 600"))
    #expect(result.stdout.contains("Display size  600 x 400"))
  }

  @Test("each failing file: exit 1, one stderr line naming it and the cause, no crash")
  func failures() throws {
    let folder = try Fixture.temporaryFolder()
    let jpeg = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let cases: [(String, String)] = [
      (folder.file("missing.jpg"), "no such file"),
      (folder.path, "is a directory, not an image file"),
      (try folder.write("empty.jpg", []), "empty file (0 bytes)"),
    ]
    // A whole header: described, with the damage stated.
    let cut = try folder.write("cut.jpg", Array(jpeg.prefix(jpeg.count - 900)))
    let described = try CLI.run(["info", cut])
    #expect(described.status == 0)
    #expect(
      described.stdout.contains(
        "Damage        truncated JPEG: image data ends without an end-of-image marker\n"),
      "\(described.stdout)")
    for (path, cause) in cases {
      let result = try CLI.run(["info", path])
      #expect(result.status == 1, "\(path)")
      #expect(result.stderr == "darkroom: \(path): \(cause)\n")
      #expect(result.stdout.isEmpty)
    }
  }

  @Test(
    "usage errors exit 2",
    arguments: [["info"], ["info", "--no-such-flag", "x.jpg"], ["frobnicate"]])
  func usage(arguments: [String]) throws {
    let result = try CLI.run(arguments)
    #expect(result.status == 2)
    #expect(result.stderr.hasPrefix("darkroom: "), "one error format: \(result.stderr)")
    #expect(result.stderr.contains("Usage: darkroom"))
  }

  @Test("info describes a video from its container header, as scan does, allowed or not")
  func videos() throws {
    let mp4 = Fixture.sample("video-rotated.mp4")
    for allow in [[], ["--allow-format", "video"]] {
      let result = try CLI.run(["info", "--json"] + allow + [mp4])
      #expect(result.status == 0, "\(result.stderr)")
      let entry = try #require(
        (try JSONSerialization.jsonObject(with: result.stdoutData) as? [[String: Any]])?.first)
      #expect(entry["mediaType"] as? String == "video")
      #expect(entry["format"] as? String == "mp4")
      #expect(entry["duration"] as? Double == 1.5)
      #expect(entry["width"] as? Int == 64 && entry["height"] as? Int == 48)
      #expect(entry["displayWidth"] as? Int == 48 && entry["displayHeight"] as? Int == 64)
      #expect(entry["rotation"] as? Int == 90)
      #expect(entry["creationDate"] as? String == "2024-05-06T07:08:09Z")
    }
    let table = try CLI.run(["info", Fixture.sample("clip.mov")])
    #expect(table.stdout.contains("Format        mov (video)\nDuration      2.00 s\n"))
  }
}
