import Foundation
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Two `darkroom serve` processes over one library folder, as two servers behind a load
/// balancer over shared storage would be: each sees what the other does through the catalog.
@Suite("darkroom serve: several processes over one library", .timeLimit(.minutes(10)), .offThePool)
struct SeveralServersTests {
  /// The change feed's sequence number now, as `server` reports it (`: from N`).
  static func cursor(_ server: ServeProcess) throws -> Int {
    let feed = try server.request(
      "GET", "/api/changes?follow=false", token: ServedLibrary.readToken)
    let from = try #require(feed.text.range(of: ": from ")?.upperBound)
    return try #require(Int(feed.text[from...].prefix { $0.isNumber }))
  }

  /// The pixel a quarter of the way across and down (the samples' centres are white).
  static func quarterPixel(_ bytes: [UInt8]) throws -> [Double] {
    let folder = try TemporaryFolder()
    let image = try VipsImage.open(path: try folder.write("image", bytes), sequential: false)
    return try image.pixel(x: image.width / 4, y: image.height / 4)
  }

  static func assetIDs(_ server: ServeProcess) throws -> [String] {
    let list = try server.request("GET", "/api/assets?limit=100", token: ServedLibrary.readToken)
    let assets = ServeProcess.json(list.text)["assets"] as? [[String: Any]] ?? []
    return assets.compactMap { $0["id"] as? String }
  }

  @Test(
    "an upload through A is in B's list and change feed; a noir job through B is A's next thumbnail; A killed mid-upload leaves nothing and B serves on",
    arguments: CatalogBackend.allCases
  )
  func twoProcesses(_ backend: CatalogBackend) throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"], backend: backend)
    let a = try ServeProcess(served.root, environment: served.environment)
    let b = try ServeProcess(served.root, environment: served.environment)
    let photo = try Fixture.bytes(Fixture.sample("display-p3.jpg"))
    let since = try Self.cursor(b)

    let uploaded = try a.request("POST", "/api/uploads?name=new.jpg", body: photo)
    #expect(uploaded.status == 201, "\(uploaded.text)")
    let asset = ServeProcess.json(uploaded.text)["asset"] as? [String: Any]
    let id = try #require(asset?["id"] as? String)
    // B answers from the catalog A wrote: no wait, no poll of its own.
    #expect(try Self.assetIDs(b).contains(id))
    let feed = try b.request(
      "GET", "/api/changes?since=\(since)&follow=false", token: ServedLibrary.readToken)
    #expect(feed.text.contains("\"id\":\"\(id)\""), "\(feed.text)")
    #expect(feed.text.contains("\"kind\":\"inserted\""))

    // A renders (and caches) the unedited thumbnail; B runs the edit; A's next one is grey.
    let before = try a.body("/api/assets/\(id)/thumbnail")
    #expect(before.status == 200)
    #expect(!isGrey(try Self.quarterPixel(before.bytes)))
    let body = try JSONSerialization.data(withJSONObject: [
      "action": "apply", "filters": ["noir"], "ids": [id],
    ])
    let started = try b.request("POST", "/api/jobs", body: Array(body))
    #expect(started.status == 202, "\(started.text)")
    let job = try #require(ServeProcess.json(started.text)["id"] as? String)
    #expect(
      try eventually {
        let status = ServeProcess.json(try a.request("GET", "/api/jobs/\(job)").text)
        return status["finished"] as? Bool == true && status["done"] as? Int == 1
      })
    let after = try a.body("/api/assets/\(id)/thumbnail")
    #expect(after.status == 200)
    let grey = try Self.quarterPixel(after.bytes)
    #expect(grey.count == 1 || isGrey(grey), "\(grey)")

    // A dies with half an upload in: nothing is catalogued, B goes on, and the next process
    // on the library (a restarted A) removes the dead upload's temporary file.
    let fd = try a.connect()
    let head =
      "POST /api/uploads?name=cut.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      + "Authorization: Bearer \(ServedLibrary.writeToken)\r\nContent-Length: \(photo.count)\r\n\r\n"
    let other = try Fixture.bytes(Fixture.sample("gps.jpg"))
    a.send(fd, Array(head.utf8) + Array(other.prefix(other.count / 2)))
    let uploads = served.root + "/Uploads"
    let partial = {
      ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).filter {
        $0.hasSuffix(".partial")
      }
    }
    #expect(eventually { partial().count == 1 })
    kill(a.process.processIdentifier, SIGKILL)
    a.process.waitUntilExit()
    close(fd)
    #expect(a.process.terminationReason == .uncaughtSignal)
    #expect(try Self.assetIDs(b).count == 2)
    #expect(try b.body("/api/assets/\(id)/thumbnail").status == 200)
    let restarted = try ServeProcess(served.root, environment: served.environment)
    #expect(partial().isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: uploads) == ["new.jpg"])
    #expect(try Self.assetIDs(restarted).count == 2)
    #expect(restarted.stop() == 0)
    #expect(b.stop() == 0)
    #expect(!b.stderr.contains(" 500 "), "\(b.stderr)")
  }

  @Test(
    "a gallery login through A is a session through B and after A restarts; a logout through B ends it in A; its file is 0600 and names no session"
  )
  func sessions() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let a = try ServeProcess(served.root, environment: served.environment)
    let b = try ServeProcess(served.root, environment: served.environment)
    let login = try a.exchange(
      "POST /login HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n",
      body: Array("token=\(ServedLibrary.writeToken)&next=%2F".utf8))
    #expect(login.status == 303, "\(login.text)")
    let start = try #require(login.text.range(of: "darkroom_session=")?.upperBound)
    let id = String(login.text[start...].prefix { $0.isHexDigit })
    #expect(id.count == 80)
    let cookie = "Cookie: darkroom_session=\(id)\r\n"

    // B knows it: reads, and a write that carries the session's CSRF token (from B's page).
    let list = try b.exchange("GET /api/assets HTTP/1.1\r\n" + cookie)
    #expect(list.status == 200)
    let page = try b.exchange("GET / HTTP/1.1\r\n" + cookie)
    let csrfStart = try #require(
      page.text.range(of: "<meta name=\"csrf-token\" content=\"")?.upperBound)
    let csrf = String(page.text[csrfStart...].prefix { $0 != "\"" })
    #expect(csrf.count == 32)
    let album = "{\"op\":\"create\",\"title\":\"Shared\"}"
    let refused = try b.exchange(
      "POST /api/albums HTTP/1.1\r\nContent-Type: application/json\r\n" + cookie,
      body: Array(album.utf8))
    #expect(refused.status == 403)
    let made = try b.exchange(
      "POST /api/albums HTTP/1.1\r\nContent-Type: application/json\r\nX-CSRF-Token: \(csrf)\r\n"
        + cookie, body: Array(album.utf8))
    #expect(made.status == 200, "\(made.text)")
    #expect(made.text.contains("\"title\":\"Shared\""))

    // The session is a file of the library's, readable by the server's user alone, whose
    // name is its token's label and the hash of its id, not the id.
    let folder = served.root + "/.darkroom/sessions"
    let files = try FileManager.default.contentsOfDirectory(atPath: folder)
    let label = SessionStore.label(ofToken: ServedLibrary.writeToken)
    #expect(id.hasPrefix(label))
    #expect(files == [label + "-" + ContentHash.of(text: id).hex])
    var info = stat()
    #expect(stat(folder, &info) == 0 && info.st_mode & 0o777 == 0o700)
    #expect(stat(folder + "/" + files[0], &info) == 0 && info.st_mode & 0o777 == 0o600)

    // A restarted A still knows it; a logout through B ends it there, in A too.
    #expect(a.stop() == 0)
    let restarted = try ServeProcess(served.root, environment: served.environment)
    #expect(try restarted.exchange("GET /api/assets HTTP/1.1\r\n" + cookie).status == 200)
    let logout = try b.exchange(
      "POST /logout HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n" + cookie,
      body: Array("csrf=\(csrf)".utf8))
    #expect(logout.status == 303, "\(logout.text)")
    #expect(try restarted.exchange("GET /api/assets HTTP/1.1\r\n" + cookie).status == 401)
    #expect(try b.exchange("GET /api/assets HTTP/1.1\r\n" + cookie).status == 401)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    #expect(restarted.stop() == 0)
    #expect(b.stop() == 0)
  }

  @Test(
    "a job run through B is followed through A to its end: A's events come from the catalog, not one snapshot",
    arguments: CatalogBackend.allCases
  )
  func jobFollowedElsewhere(_ backend: CatalogBackend) throws {
    let served = try ServedLibrary(backend: backend)
    let ids = try served.ids().map(\.rawValue)
    // While the gate file exists, B's job items wait: the job is caught running.
    let gates = try TemporaryFolder()
    let gate = try gates.write("gate", [1])
    let a = try ServeProcess(served.root, environment: served.environment)
    let b = try ServeProcess(
      served.root,
      environment: served.environment.merging(["DARKROOM_TEST_JOB_GATE": gate]) { $1 })
    let body = try JSONSerialization.data(withJSONObject: [
      "action": "apply", "filters": ["noir"], "ids": ids,
    ])
    let started = try b.request("POST", "/api/jobs", body: Array(body))
    #expect(started.status == 202, "\(started.text)")
    let job = try #require(ServeProcess.json(started.text)["id"] as? String)
    #expect(try eventually { try a.request("GET", "/api/jobs/\(job)").status == 200 })

    // A's event stream: the job where it is (running, nothing done), then, once the gate
    // opens, the steps B records, to the end.
    let all = try a.jobEvents(job) { first in
      #expect(first.contains("\"done\":0"), "\(first)")
      #expect(!first.contains("event: done"))
      unlink(gate)
    }
    let end = try #require(all.range(of: "event: done")?.upperBound, "\(all)")
    let last = all[end...]
    #expect(last.contains("\"done\":\(ids.count)"), "\(last)")
    #expect(last.contains("\"state\":\"finished\""))
    #expect(b.stop() == 0)
    #expect(a.stop() == 0)
  }
}
