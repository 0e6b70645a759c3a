// The catalogue resources (service.md section 6): devices, productions, transcoding profiles,
// custom metadata sets and fields, content types, asset hold durations (and the date_del they
// give new assets), and that all of it survives a restart.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, statSync, symlinkSync } from 'node:fs'
import { type TestApp, testApp } from '../helpers/app.ts'
import { errorEntry, expectError, folders } from '../helpers/envelope.ts'

const dirs = folders()
afterAll(() => dirs.cleanup())

const q = (value: string) => encodeURIComponent(value)

/** Every field of a device as POST /devices/ fills it in when only name and path are sent. */
const deviceDefaults = (id: number, name: string, path: string) => ({
  id,
  name,
  display_name: name,
  path,
  is_internal: false,
  is_archive: false,
  autoshot_detection: false,
  allow_direct_writing: true,
  recieve_xml_meta: false,
  protocol: 'file',
  anonymous: false,
  server: null,
  username: null,
  password: null,
  transcoding_profile: null,
  archive_connector: null,
  passthrough_profiles: [],
  write_permission_groups: [],
})

describe('devices', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('POST with name and path: 201 and every default of service.md 6', async () => {
    const root = dirs.make()
    const r = await t.post('/api/devices/', { name: 'stage', path: root })
    expect(r.status).toBe(201)
    expect(r.json).toEqual(deviceDefaults(r.json.id, 'stage', `${root}/`))
    expect((await t.get(`/api/devices/${r.json.id}/`)).json).toEqual(r.json)
  })

  test('every optional field is taken from the body', async () => {
    const profile = await t.post('/api/transcodingprofiles/', { name: 'device-profile' })
    const root = dirs.make()
    const body = {
      name: 'nas',
      display_name: 'The NAS',
      path: `${root}/`,
      is_internal: true,
      is_archive: true,
      autoshot_detection: true,
      allow_direct_writing: false,
      recieve_xml_meta: true,
      protocol: 'smb',
      anonymous: true,
      server: 'nas.local',
      username: 'editor',
      transcoding_profile: profile.json.id,
      archive_connector: 'lto',
      passthrough_profiles: [profile.json.id],
      write_permission_groups: ['editors'],
    }
    const r = await t.post('/api/devices/', body)
    expect(r.status).toBe(201)
    expect(r.json).toEqual({ id: r.json.id, ...body, password: null })
  })

  test("protocol copy (medialoopster's samples) is taken, stored and shown like file", async () => {
    const root = dirs.make()
    const r = await t.post('/api/devices/', { name: 'copy-folder', path: root, protocol: 'copy' })
    expect(r.status).toBe(201)
    expect(r.json).toEqual({ ...deviceDefaults(r.json.id, 'copy-folder', `${root}/`), protocol: 'copy' })
    expect((await t.get(`/api/devices/${r.json.id}/`)).json).toEqual(r.json)
  })

  test('a stored password is shown as ******** everywhere, never itself', async () => {
    const r = await t.post('/api/devices/', { name: 'locked', path: dirs.make(), password: 's3cret!' })
    expect(r.status).toBe(201)
    expect(r.json.password).toBe('********')
    const one = await t.get(`/api/devices/${r.json.id}/`)
    expect(one.json.password).toBe('********')
    const list = await t.get(`/api/devices/?path=${q(r.json.path)}`)
    expect(list.json).toEqual([one.json])
    for (const reply of [r, one, list]) expect(reply.text).not.toContain('s3cret')
    // The password reaches the database (it is needed to mount the share).
    const stored = t.db.$client
      .query<{ password: string }, [number]>('SELECT password FROM devices WHERE id = ?')
      .get(r.json.id)
    expect(stored?.password).toBe('s3cret!')
  })

  test('the path need not exist; a missing final slash is added; . and .. are resolved', async () => {
    const root = dirs.make()
    const cases: [string, string][] = [
      [`${root}/not/yet`, `${root}/not/yet/`],
      [`${root}/a/../b`, `${root}/b/`],
      [`${root}/./c//d/`, `${root}/c/d/`],
      [`${root}/e/f/..`, `${root}/e/`],
    ]
    for (const [i, [given, stored]] of cases.entries()) {
      const r = await t.post('/api/devices/', { name: `norm-${i}`, path: given })
      expect(r.status).toBe(201)
      expect(r.json.path).toBe(stored)
    }
    expect(existsSync(`${root}/not`)).toBe(false)
  })

  test('a relative or otherwise bad path is 400 invalid at /path', async () => {
    for (const path of [
      'relative/path',
      './here',
      '../up',
      '~/media',
      'C:\\media',
      ' /leading-space',
      'a\0b',
      '/nul\0/x',
      '',
    ]) {
      const r = await t.post('/api/devices/', { name: `bad-path-${path.length}`, path })
      if (r.status !== 400) throw new Error(`${JSON.stringify(path)}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer: '/path' })
    }
  })

  test('a taken name is 400 unique at /name', async () => {
    expect((await t.post('/api/devices/', { name: 'twin', path: dirs.make() })).status).toBe(201)
    expectError(await t.post('/api/devices/', { name: 'twin', path: dirs.make() }), 400, 'unique', { pointer: '/name' })
  })

  test('a taken path (after normalizing) is a 400 unique at /path, not a 500', async () => {
    const root = dirs.make()
    expect((await t.post('/api/devices/', { name: 'first-here', path: root })).status).toBe(201)
    for (const [i, path] of [`${root}/`, `${root}/x/..`, `${root}//`].entries()) {
      expectError(await t.post('/api/devices/', { name: `second-here-${i}`, path }), 400, 'unique', {
        pointer: '/path',
      })
    }
  })

  test('missing fields are 400 required with pointers', async () => {
    expectError(await t.post('/api/devices/', { path: dirs.make() }), 400, 'required', { pointer: '/name' })
    expectError(await t.post('/api/devices/', { name: 'pathless' }), 400, 'required', { pointer: '/path' })
    expectError(await t.post('/api/devices/', { name: '', path: dirs.make() }), 400, 'invalid', { pointer: '/name' })
  })

  test('wrong types and unknown enum values are 400 invalid at their pointer', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ protocol: 'ftp' }, '/protocol'],
      [{ is_internal: 'yes' }, '/is_internal'],
      [{ name: 42 }, '/name'],
      [{ path: 7 }, '/path'],
      [{ transcoding_profile: 424242 }, '/transcoding_profile'],
      [{ passthrough_profiles: 'x' }, '/passthrough_profiles'],
      [{ write_permission_groups: [1] }, '/write_permission_groups/0'],
    ]
    for (const [patch, pointer] of cases) {
      const r = await t.post('/api/devices/', { name: 'typed', path: dirs.make(), ...patch })
      if (r.status !== 400) throw new Error(`${JSON.stringify(patch)}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer })
    }
  })

  test('?path= is an exact match and must end with a slash', async () => {
    const root = dirs.make()
    const outer = await t.post('/api/devices/', { name: 'outer', path: root })
    const inner = await t.post('/api/devices/', { name: 'inner', path: `${root}/inner sub` })
    expect((await t.get(`/api/devices/?path=${q(`${root}/`)}`)).json).toEqual([outer.json])
    const found = await t.get(`/api/devices/?path=${q(`${root}/inner sub/`)}`)
    // The create's answer says the folder is not there (warning.path); the record itself does not.
    expect(found.json).toEqual([{ ...inner.json, warning: undefined }])
    expect(found.headers.get('x-total-count')).toBe('1')
    expect((await t.get(`/api/devices/?path=${q(`${root}/inn`)}/`)).json).toEqual([])
    for (const path of [root, `${root}/inner sub`, '']) {
      expectError(await t.get(`/api/devices/?path=${q(path)}`), 400, 'invalid', { parameter: 'path' })
    }
  })
})

describe('productions', () => {
  const t = testApp()
  afterAll(() => t.cleanup())
  let root: string
  let device: any
  beforeAll(async () => {
    root = dirs.make()
    const r = await t.post('/api/devices/', { name: 'prod-disk', path: root, password: 'pw' })
    expect(r.status).toBe(201)
    device = r.json
  })

  test('POST with name and storage_root: 201, defaults of service.md 6, folder made on disk', async () => {
    const r = await t.post('/api/productions/', { name: 'Big Film', storage_root: `${root}/films/big` })
    expect(r.status).toBe(201)
    expect(r.json).toEqual({
      id: r.json.id,
      name: 'Big Film',
      codename: 'big-film',
      company: '',
      storage_root: `${root}/films/big/`,
      proxy_root: `${root}/films/big/proxies/`,
      proxy_url: '',
      upload_root: null,
      move_uploads: false,
      ignore_patterns: [],
      upload_device: device,
      audioasset_device: device,
      imageasset_device: device,
      videoasset_device: device,
      // What the medialoopster client needs (docs/api.md, Productions): the admin's rights, no member.
      can_write: true,
      can_delete_assets: true,
      members: [],
      san_mount: '',
      export_type: '',
      default_approval_status: 0,
      direct_attached_site: 1,
      network_attached_site: [],
      member_groups: [],
      projectasset_device: null,
    })
    expect(device.password).toBe('********')
    expect(statSync(`${root}/films/big`).isDirectory()).toBe(true)
    expect((await t.get(`/api/productions/${r.json.id}/`)).json).toEqual(r.json)
  })

  test('an existing storage folder is fine, and optional fields are taken from the body', async () => {
    mkdirSync(`${root}/existing`)
    const r = await t.post('/api/productions/', {
      name: 'Existing',
      storage_root: `${root}/existing/`,
      codename: 'exist_1',
      company: 'ACME',
      proxy_root: `${root}/proxies/exist`,
      proxy_url: 'https://proxies.example.com/exist/',
    })
    expect(r.status).toBe(201)
    expect(r.json).toMatchObject({
      codename: 'exist_1',
      company: 'ACME',
      storage_root: `${root}/existing/`,
      proxy_root: `${root}/proxies/exist/`,
      proxy_url: 'https://proxies.example.com/exist/',
    })
  })

  test('required fields: 400 required at /name and /storage_root', async () => {
    const r = await t.post('/api/productions/', {})
    expect(r.status).toBe(400)
    expect(r.json.errors.sort((a: any, b: any) => a.source.pointer.localeCompare(b.source.pointer))).toEqual([
      errorEntry(400, 'required', { pointer: '/name' }),
      errorEntry(400, 'required', { pointer: '/storage_root' }),
    ])
    expectError(await t.post('/api/productions/', { name: 'No root' }), 400, 'required', { pointer: '/storage_root' })
    expectError(await t.post('/api/productions/', { storage_root: `${root}/noname` }), 400, 'required', {
      pointer: '/name',
    })
  })

  test('storage_root must lie on a device; nothing is made on disk otherwise', async () => {
    const outside = dirs.make()
    const cases = [`${outside}/nope`, 'relative/place', `${root}/../${outside.split('/').pop()}/escape`, '/']
    for (const [i, storage_root] of cases.entries()) {
      const r = await t.post('/api/productions/', { name: `Off device ${i}`, storage_root })
      if (r.status !== 400) throw new Error(`${storage_root}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer: '/storage_root' })
    }
    expect(existsSync(`${outside}/nope`)).toBe(false)
    expect(existsSync(`${outside}/escape`)).toBe(false)
  })

  test('a symlink inside a device that points outside it is refused', async () => {
    const outside = dirs.make()
    symlinkSync(outside, `${root}/link-out`)
    const r = await t.post('/api/productions/', { name: 'Through link', storage_root: `${root}/link-out/show` })
    expectError(r, 400, 'invalid', { pointer: '/storage_root' })
    expect(existsSync(`${outside}/show`)).toBe(false)
    expect((await t.get(`/api/productions/?storage_root=${q(`${root}/link-out/show/`)}`)).json).toEqual([])

    // A link that stays inside the device is fine.
    mkdirSync(`${root}/real-inside`)
    symlinkSync(`${root}/real-inside`, `${root}/link-in`)
    const ok = await t.post('/api/productions/', { name: 'Inside link', storage_root: `${root}/link-in/show` })
    expect(ok.status).toBe(201)
    expect(existsSync(`${root}/real-inside/show`)).toBe(true)
  })

  test('codename defaults to a slug of the name and is made unique', async () => {
    const a = await t.post('/api/productions/', { name: 'Über Show: Part 1!', storage_root: `${root}/slug-a` })
    expect(a.status).toBe(201)
    expect(a.json.codename).toBe('uber-show-part-1')
    const b = await t.post('/api/productions/', { name: 'uber show part 1', storage_root: `${root}/slug-b` })
    expect(b.status).toBe(201)
    expect(b.json.codename).toBe('uber-show-part-1-2')
    const c = await t.post('/api/productions/', { name: 'UBER-SHOW part 1', storage_root: `${root}/slug-c` })
    expect(c.json.codename).toBe('uber-show-part-1-3')
  })

  test('letters outside ASCII are transliterated into the codename, not dropped (issue 27)', async () => {
    const names = {
      'Ørsted Øresund': 'orsted-oresund',
      'Straße am Meer': 'strasse-am-meer',
      'Łódź Nights': 'lodz-nights',
      'Ночная смена': 'nochnaya-smena',
      Νύχτα: 'nyxta',
      'Æon & Co': 'aeon-co',
    }
    const made: Record<string, string> = {}
    for (const [i, name] of Object.keys(names).entries()) {
      const r = await t.post('/api/productions/', { name, storage_root: `${root}/translit-${i}` })
      if (r.status !== 201) throw new Error(`${name}: ${r.status} ${r.text}`)
      made[name] = r.json.codename
    }
    expect(made).toEqual(names)
    // A taken transliterated codename still gets its suffix, and a name with nothing to spell
    // in ASCII still falls back to production.
    const again = await t.post('/api/productions/', { name: 'ORSTED øresund', storage_root: `${root}/translit-again` })
    expect(again.json.codename).toBe('orsted-oresund-2')
    const none = await t.post('/api/productions/', { name: '日本語 ♥', storage_root: `${root}/translit-none` })
    expect(none.json.codename).toBe('production')
  })

  test('a taken name is 400 unique at /name; a taken codename 400 unique at /codename', async () => {
    expect((await t.post('/api/productions/', { name: 'Twin', storage_root: `${root}/twin-a` })).status).toBe(201)
    expectError(await t.post('/api/productions/', { name: 'Twin', storage_root: `${root}/twin-b` }), 400, 'unique', {
      pointer: '/name',
    })
    expectError(
      await t.post('/api/productions/', { name: 'Not twin', codename: 'twin', storage_root: `${root}/twin-c` }),
      400,
      'unique',
      { pointer: '/codename' },
    )
    expect(existsSync(`${root}/twin-b`)).toBe(false)
  })

  test('a codename that is not a slug is 400 invalid', async () => {
    for (const codename of ['Has Space', 'UPPER', '-lead', '']) {
      expectError(
        await t.post('/api/productions/', { name: `Bad code ${codename}`, codename, storage_root: `${root}/bc` }),
        400,
        'invalid',
        { pointer: '/codename' },
      )
    }
  })

  test('device fields default to the device of storage_root (the longest prefix) and take ids', async () => {
    mkdirSync(`${root}/nested`)
    const nested = await t.post('/api/devices/', { name: 'nested-disk', path: `${root}/nested` })
    expect(nested.status).toBe(201)
    const r = await t.post('/api/productions/', {
      name: 'Nested',
      storage_root: `${root}/nested/show`,
      upload_device: device.id,
    })
    expect(r.status).toBe(201)
    expect(r.json).toMatchObject({
      upload_device: device,
      audioasset_device: nested.json,
      imageasset_device: nested.json,
      videoasset_device: nested.json,
    })
    const all = await t.post('/api/productions/', {
      name: 'All set',
      storage_root: `${root}/allset`,
      upload_device: nested.json.id,
      audioasset_device: nested.json.id,
      imageasset_device: device.id,
      videoasset_device: nested.json.id,
    })
    expect(all.json).toMatchObject({
      upload_device: nested.json,
      audioasset_device: nested.json,
      imageasset_device: device,
      videoasset_device: nested.json,
    })
  })

  test('an unknown device id is 400 invalid at its field', async () => {
    for (const field of ['upload_device', 'audioasset_device', 'imageasset_device', 'videoasset_device']) {
      for (const value of [424242, 'abc', 0]) {
        const r = await t.post('/api/productions/', {
          name: `Unknown ${field}`,
          storage_root: `${root}/unknown`,
          [field]: value,
        })
        if (r.status !== 400) throw new Error(`${field}=${value}: ${r.status} ${r.text}`)
        expectError(r, 400, 'invalid', { pointer: `/${field}` })
      }
    }
    expect(existsSync(`${root}/unknown`)).toBe(false)
  })

  test('proxy_root must lie on a device; proxy_url must be a URL', async () => {
    expectError(
      await t.post('/api/productions/', {
        name: 'Bad proxy',
        storage_root: `${root}/bp`,
        proxy_root: `${dirs.make()}/p`,
      }),
      400,
      'invalid',
      { pointer: '/proxy_root' },
    )
    expectError(
      await t.post('/api/productions/', { name: 'Bad url', storage_root: `${root}/bu`, proxy_url: 'not a url' }),
      400,
      'invalid',
      { pointer: '/proxy_url' },
    )
  })

  test('?storage_root= is an exact match and must end with a slash', async () => {
    const a = await t.post('/api/productions/', { name: 'Filter me', storage_root: `${root}/filter me` })
    const b = await t.post('/api/productions/?nest=true', {
      name: 'Filter me too',
      storage_root: `${root}/filter me/too`,
    })
    expect((await t.get(`/api/productions/?storage_root=${q(`${root}/filter me/`)}`)).json).toEqual([a.json])
    const r = await t.get(`/api/productions/?storage_root=${q(`${root}/filter me/too/`)}`)
    expect(r.json).toEqual([b.json])
    expect(r.headers.get('x-total-count')).toBe('1')
    expectError(await t.get(`/api/productions/?storage_root=${q(`${root}/filter me`)}`), 400, 'invalid', {
      parameter: 'storage_root',
    })
  })

  test('the list holds the created productions in id order', async () => {
    const r = await t.get('/api/productions/')
    const ids = r.json.map((p: { id: number }) => p.id)
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y))
    expect(r.headers.get('x-total-count')).toBe(String(ids.length))
    expect(r.json.map((p: { name: string }) => p.name)).toContain('Big Film')
  })
})

describe('transcoding profiles', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('POST with only a name: status 200 and the defaults of api.md 2.4', async () => {
    const r = await t.post('/api/transcodingprofiles/', { name: 'HD' })
    expect(r.status).toBe(200)
    expect(r.json).toEqual({
      id: r.json.id,
      name: 'HD',
      codec_name: '',
      codec_profile: '',
      video_container: '',
      frame_rate: '',
      video_data_rate: '',
      width: 0,
      height: 0,
      display_aspect_ratio: '',
      pix_fmt: '',
      progressive: false,
      passthrough: false,
      default_profile: false,
      interlaced: 'tff',
      ar_conversion: 'box',
      should_have_audio: true,
      audio_codec_name: '',
      audio_container: '',
      audio_codec_profile: '',
      audio_data_rate: '',
      tracks: 0,
      channels_per_track: 0,
      bits_per_sample: 0,
      sample_rate: 0,
    })
    expect((await t.get(`/api/transcodingprofiles/${r.json.id}/`)).json).toEqual(r.json)
  })

  test('every field is taken from the body', async () => {
    const body = {
      name: 'ProRes HQ',
      codec_name: 'prores',
      codec_profile: 'hq',
      video_container: 'mov',
      frame_rate: '25',
      video_data_rate: '220M',
      width: 1920,
      height: 1080,
      display_aspect_ratio: '16:9',
      pix_fmt: 'yuv422p10le',
      progressive: true,
      passthrough: true,
      default_profile: true,
      interlaced: 'bff',
      ar_conversion: 'crop',
      should_have_audio: false,
      audio_codec_name: 'pcm_s24le',
      audio_container: 'mov',
      audio_codec_profile: '',
      audio_data_rate: '1152k',
      tracks: 4,
      channels_per_track: 2,
      bits_per_sample: 24,
      sample_rate: 48000,
    }
    const r = await t.post('/api/transcodingprofiles/', body)
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ id: r.json.id, ...body })
  })

  test('a taken name is 400 unique at /name', async () => {
    expect((await t.post('/api/transcodingprofiles/', { name: 'Proxy' })).status).toBe(200)
    expectError(await t.post('/api/transcodingprofiles/', { name: 'Proxy' }), 400, 'unique', { pointer: '/name' })
  })

  test('a missing name is 400 required at /name; bad values are 400 invalid', async () => {
    expectError(await t.post('/api/transcodingprofiles/', { width: 10 }), 400, 'required', { pointer: '/name' })
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '' }, '/name'],
      [{ name: 'w', width: -1 }, '/width'],
      [{ name: 'w', width: 1.5 }, '/width'],
      [{ name: 'w', height: 'tall' }, '/height'],
      [{ name: 'w', height: true }, '/height'],
      [{ name: 'w', tracks: [2] }, '/tracks'],
      [{ name: 'w', progressive: 'yes' }, '/progressive'],
      [{ name: 'w', codec_name: 5 }, '/codec_name'],
    ]
    for (const [body, pointer] of cases) {
      const r = await t.post('/api/transcodingprofiles/', body)
      if (r.status !== 400) throw new Error(`${JSON.stringify(body)}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer })
    }
  })
})

describe('custom metadata sets and fields', () => {
  const t = testApp()
  afterAll(() => t.cleanup())
  const sets: Record<string, any> = {}
  beforeAll(async () => {
    for (const [name, content_type] of [
      ['video-a', 4],
      ['video-b', 4],
      ['audio', 2],
      ['project', 1],
    ] as const) {
      const r = await t.post('/api/custommetadatasets/', { name, description: `${name} fields`, content_type })
      expect(r.status).toBe(201)
      sets[name] = r.json
    }
  })

  test('POST a set: 201 with the record', async () => {
    const r = await t.post('/api/custommetadatasets/', { name: 'Images', description: 'Stills', content_type: 3 })
    expect(r.status).toBe(201)
    expect(r.json).toEqual({ id: r.json.id, name: 'Images', description: 'Stills', content_type: 3 })
    expect((await t.get(`/api/custommetadatasets/${r.json.id}/`)).json).toEqual(r.json)
    expect(sets['video-a']).toEqual({
      id: sets['video-a'].id,
      name: 'video-a',
      description: 'video-a fields',
      content_type: 4,
    })
  })

  test('a set needs name, description and content_type: one required entry each', async () => {
    const full = { name: 'n', description: 'd', content_type: 4 }
    for (const field of Object.keys(full)) {
      const body: Record<string, unknown> = { ...full }
      delete body[field]
      expectError(await t.post('/api/custommetadatasets/', body), 400, 'required', { pointer: `/${field}` })
    }
    const r = await t.post('/api/custommetadatasets/', {})
    expect(r.status).toBe(400)
    expect(r.json.errors.map((e: any) => e.source.pointer).sort()).toEqual(['/content_type', '/description', '/name'])
    for (const e of r.json.errors) expect(e).toEqual(errorEntry(400, 'required', e.source))
  })

  test('an unknown content type is 400 invalid at /content_type', async () => {
    for (const content_type of [5, 99, 0, -1, 'video', 1.5]) {
      const r = await t.post('/api/custommetadatasets/', { name: 'x', description: 'y', content_type })
      if (r.status !== 400) throw new Error(`${content_type}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer: '/content_type' })
    }
  })

  test("POST a field: 200 with the record; order defaults to one more than the set's highest", async () => {
    const a = await t.post('/api/custommetadata/', {
      key: 'scene.number',
      value: 'Scene number',
      custom_metadata_set: sets['video-a'].id,
    })
    expect(a.status).toBe(200)
    expect(a.json).toEqual({
      id: a.json.id,
      key: 'scene.number',
      value: 'Scene number',
      order: 1,
      custom_metadata_set: sets['video-a'].id,
      validation_rule: null,
    })
    expect((await t.get(`/api/custommetadata/${a.json.id}/`)).json).toEqual(a.json)

    const b = await t.post('/api/custommetadata/', {
      key: 'scene.take',
      value: 'Take',
      custom_metadata_set: sets['video-a'].id,
    })
    expect(b.json.order).toBe(2)
    const c = await t.post('/api/custommetadata/', {
      key: 'scene.camera',
      value: 'Camera',
      custom_metadata_set: sets['video-a'].id,
      order: 10,
    })
    expect(c.json.order).toBe(10)
    const d = await t.post('/api/custommetadata/', {
      key: 'scene.lens',
      value: 'Lens',
      custom_metadata_set: sets['video-a'].id,
    })
    expect(d.json.order).toBe(11)
    // Another set counts on its own.
    const e = await t.post('/api/custommetadata/', {
      key: 'grade.look',
      value: 'Look',
      custom_metadata_set: sets['video-b'].id,
    })
    expect(e.json.order).toBe(1)
  })

  test('a taken key is 400 unique at /key, in any set', async () => {
    expect(
      (await t.post('/api/custommetadata/', { key: 'shared.key', value: 'A', custom_metadata_set: sets.audio.id }))
        .status,
    ).toBe(200)
    for (const set of [sets.audio, sets['video-b']]) {
      expectError(
        await t.post('/api/custommetadata/', { key: 'shared.key', value: 'B', custom_metadata_set: set.id }),
        400,
        'unique',
        { pointer: '/key' },
      )
    }
  })

  test('the key must be dotted lowercase: [a-z0-9_]+(.[a-z0-9_]+)*', async () => {
    for (const key of ['a', 'a_b.c_1.d2', '0.9', 'x.y.z']) {
      const r = await t.post('/api/custommetadata/', { key, value: 'ok', custom_metadata_set: sets.project.id })
      if (r.status !== 200) throw new Error(`${key}: ${r.status} ${r.text}`)
    }
    for (const key of [
      'Scene',
      'scene number',
      'scene..number',
      '.scene',
      'scene.',
      'scène',
      '',
      'a-b',
      'a/b',
      'a.b ',
    ]) {
      const r = await t.post('/api/custommetadata/', { key, value: 'bad', custom_metadata_set: sets.project.id })
      if (r.status !== 400) throw new Error(`${JSON.stringify(key)}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer: '/key' })
    }
  })

  test('a field needs key, value and custom_metadata_set; the set must exist', async () => {
    const full = { key: 'req.check', value: 'v', custom_metadata_set: sets.project.id }
    for (const field of Object.keys(full)) {
      const body: Record<string, unknown> = { ...full }
      delete body[field]
      expectError(await t.post('/api/custommetadata/', body), 400, 'required', { pointer: `/${field}` })
    }
    const r = await t.post('/api/custommetadata/', {})
    expect(r.json.errors.map((e: any) => e.source.pointer).sort()).toEqual(['/custom_metadata_set', '/key', '/value'])
    expectError(await t.post('/api/custommetadata/', { ...full, custom_metadata_set: 424242 }), 400, 'invalid', {
      pointer: '/custom_metadata_set',
    })
    expectError(await t.post('/api/custommetadata/', { ...full, custom_metadata_set: 'one' }), 400, 'invalid', {
      pointer: '/custom_metadata_set',
    })
  })

  test('validation_rule must be a valid regular expression', async () => {
    const ok = await t.post('/api/custommetadata/', {
      key: 'rule.digits',
      value: 'Digits',
      custom_metadata_set: sets.project.id,
      validation_rule: '^\\d+$',
    })
    expect(ok.status).toBe(200)
    expect(ok.json.validation_rule).toBe('^\\d+$')
    const none = await t.post('/api/custommetadata/', {
      key: 'rule.none',
      value: 'None',
      custom_metadata_set: sets.project.id,
      validation_rule: null,
    })
    expect(none.json.validation_rule).toBeNull()
    for (const [i, rule] of ['(', '[a-', '*x', 'a{2,1}', '(?<n>a)(?<n>b)'].entries()) {
      const r = await t.post('/api/custommetadata/', {
        key: `rule.bad${i}`,
        value: 'Bad',
        custom_metadata_set: sets.project.id,
        validation_rule: rule,
      })
      if (r.status !== 400) throw new Error(`${rule}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer: '/validation_rule' })
    }
  })

  test('filters by content_type_name or content_type_id, not both', async () => {
    const all = (await t.get('/api/custommetadata/')).json as any[]
    const setType = new Map(Object.values(sets).map((s: any) => [s.id, s.content_type]))
    const ofType = (type: number) => all.filter((f) => setType.get(f.custom_metadata_set) === type)
    expect(ofType(4).length).toBeGreaterThan(1)
    expect(ofType(2).length).toBe(1)
    for (const [name, id] of [
      ['projectasset', 1],
      ['audioasset', 2],
      ['imageasset', 3],
      ['videoasset', 4],
    ] as const) {
      const byName = await t.get(`/api/custommetadata/?content_type_name=${name}`)
      expect(byName.json).toEqual(ofType(id))
      expect(byName.headers.get('x-total-count')).toBe(String(ofType(id).length))
      const byId = await t.get(`/api/custommetadata/?content_type_id=${id}`)
      expect(byId.json).toEqual(ofType(id))
    }
    expect((await t.get('/api/custommetadata/?content_type_id=99')).json).toEqual([])
    const both = await t.get('/api/custommetadata/?content_type_name=videoasset&content_type_id=4')
    expect(both.status).toBe(400)
    expect(both.json.errors).toHaveLength(1)
    expect(both.json.errors[0]).toMatchObject({ status: '400', code: 'invalid', title: 'Validation Error' })
    expectError(await t.get('/api/custommetadata/?content_type_name=clip'), 400, 'invalid', {
      parameter: 'content_type_name',
    })
    expectError(await t.get('/api/custommetadata/?content_type_id=video'), 400, 'invalid', {
      parameter: 'content_type_id',
    })
  })
})

describe('content types', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('the fixed four, listed and one by one', async () => {
    const r = await t.get('/api/contenttypes/')
    expect(r.json).toEqual([
      { id: 1, name: 'projectasset' },
      { id: 2, name: 'audioasset' },
      { id: 3, name: 'imageasset' },
      { id: 4, name: 'videoasset' },
    ])
    expect(r.headers.get('x-total-count')).toBe('4')
    expect((await t.get('/api/contenttypes/3/')).json).toEqual({ id: 3, name: 'imageasset' })
    expect((await t.get('/api/contenttypes/?limit=1&offset=3')).json).toEqual([{ id: 4, name: 'videoasset' }])
    expectError(await t.get('/api/contenttypes/5/'), 404, 'not_found')
    expectError(await t.post('/api/contenttypes/', { name: 'fifth' }), 405, 'method_not_allowed')
  })
})

describe('asset hold durations', () => {
  let t: TestApp
  let holdRoot: string
  let otherRoot: string
  let hold: any
  let other: any
  beforeAll(async () => {
    t = testApp()
    holdRoot = dirs.make()
    otherRoot = dirs.make()
    expect((await t.post('/api/devices/', { name: 'hold-disk', path: holdRoot })).status).toBe(201)
    expect((await t.post('/api/devices/', { name: 'other-disk', path: otherRoot })).status).toBe(201)
    hold = (await t.post('/api/productions/', { name: 'Hold Show', storage_root: `${holdRoot}/show` })).json
    other = (await t.post('/api/productions/', { name: 'Other Show', storage_root: `${otherRoot}/show` })).json
  })
  afterAll(() => t.cleanup())

  const rule = (asset_type: string, context_type: string, context: string, duration: number) =>
    t.post('/api/assetholddurations/', { asset_type, context_type, context, duration })

  test('POST with all four fields: 201 with the record', async () => {
    const r = await rule('videoasset', 'device', 'hold-disk', 10)
    expect(r.status).toBe(201)
    expect(r.json).toEqual({
      id: r.json.id,
      asset_type: 'videoasset',
      context_type: 'device',
      context: 'hold-disk',
      duration: 10,
    })
    expect((await t.get(`/api/assetholddurations/${r.json.id}/`)).json).toEqual(r.json)
    const p = await rule('videoasset', 'production', 'Hold Show', 30)
    expect(p.status).toBe(201)
    expect((await rule('imageasset', 'production', 'Hold Show', 0)).status).toBe(201)
  })

  test('all four fields are required', async () => {
    const r = await t.post('/api/assetholddurations/', {})
    expect(r.status).toBe(400)
    expect(r.json.errors.map((e: any) => e.source.pointer).sort()).toEqual([
      '/asset_type',
      '/context',
      '/context_type',
      '/duration',
    ])
    for (const e of r.json.errors) expect(e).toEqual(errorEntry(400, 'required', e.source))
    const full = { asset_type: 'audioasset', context_type: 'device', context: 'hold-disk', duration: 1 }
    for (const field of Object.keys(full)) {
      const body: Record<string, unknown> = { ...full }
      delete body[field]
      expectError(await t.post('/api/assetholddurations/', body), 400, 'required', { pointer: `/${field}` })
    }
  })

  test('enums and duration are validated', async () => {
    const full = { asset_type: 'audioasset', context_type: 'device', context: 'hold-disk', duration: 1 }
    const cases: [Record<string, unknown>, string][] = [
      [{ asset_type: 'clip' }, '/asset_type'],
      [{ asset_type: 'VideoAsset' }, '/asset_type'],
      [{ context_type: 'user' }, '/context_type'],
      [{ duration: -1 }, '/duration'],
      [{ duration: 1.5 }, '/duration'],
      [{ duration: 'five' }, '/duration'],
      [{ duration: [5] }, '/duration'],
      [{ duration: true }, '/duration'],
      [{ duration: null }, '/duration'],
      [{ context: 5 }, '/context'],
    ]
    for (const [patch, pointer] of cases) {
      const r = await t.post('/api/assetholddurations/', { ...full, ...patch })
      if (r.status !== 400) throw new Error(`${JSON.stringify(patch)}: ${r.status} ${r.text}`)
      expectError(r, 400, 'invalid', { pointer })
    }
  })

  test('the context must name an existing device or production of that type', async () => {
    expectError(await rule('audioasset', 'device', 'no-such-disk', 1), 400, 'invalid', { pointer: '/context' })
    expectError(await rule('audioasset', 'production', 'No Such Show', 1), 400, 'invalid', { pointer: '/context' })
    expectError(await rule('audioasset', 'device', 'Hold Show', 1), 400, 'invalid', { pointer: '/context' })
    expectError(await rule('audioasset', 'production', 'hold-disk', 1), 400, 'invalid', { pointer: '/context' })
  })

  test('(asset_type, context_type, context) is unique', async () => {
    expect((await rule('projectasset', 'device', 'other-disk', 7)).status).toBe(201)
    expectError(await rule('projectasset', 'device', 'other-disk', 8), 400, 'unique', { pointer: '/context' })
    expect((await rule('projectasset', 'production', 'Other Show', 8)).status).toBe(201)
    expect((await rule('audioasset', 'device', 'other-disk', 8)).status).toBe(201)
  })

  test('filters asset_type and context_type; unknown values are 400', async () => {
    const all = (await t.get('/api/assetholddurations/')).json as any[]
    expect(all.length).toBeGreaterThan(4)
    for (const asset_type of ['videoasset', 'imageasset', 'projectasset', 'audioasset']) {
      const r = await t.get(`/api/assetholddurations/?asset_type=${asset_type}`)
      expect(r.json).toEqual(all.filter((h) => h.asset_type === asset_type))
      expect(r.headers.get('x-total-count')).toBe(String(r.json.length))
    }
    for (const context_type of ['device', 'production']) {
      expect((await t.get(`/api/assetholddurations/?context_type=${context_type}`)).json).toEqual(
        all.filter((h) => h.context_type === context_type),
      )
    }
    expect((await t.get('/api/assetholddurations/?asset_type=videoasset&context_type=production')).json).toEqual(
      all.filter((h) => h.asset_type === 'videoasset' && h.context_type === 'production'),
    )
    expectError(await t.get('/api/assetholddurations/?asset_type=clip'), 400, 'invalid', { parameter: 'asset_type' })
    expectError(await t.get('/api/assetholddurations/?context_type=user'), 400, 'invalid', {
      parameter: 'context_type',
    })
  })

  describe('date_del of new assets', () => {
    const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/
    const DAY = 86_400_000

    async function create(
      kind: 'video' | 'audio' | 'image',
      production: any,
      path_file: string,
      extra: Record<string, unknown> = {},
    ) {
      const r = await t.post(`/api/${kind}assets/`, {
        name: path_file.split('/').pop(),
        path_file,
        production: production.id,
        ...extra,
      })
      if (r.status !== 201) throw new Error(r.text)
      const detail = await t.get(`/api/${kind}assets/${r.json.id}/`)
      expect(detail.status).toBe(200)
      return detail.json as { date_add: string; date_del: string | null }
    }
    const expectDays = (asset: { date_add: string; date_del: string | null }, days: number) => {
      expect(asset.date_add).toMatch(TIMESTAMP)
      expect(asset.date_del).toMatch(TIMESTAMP)
      expect(Date.parse(asset.date_del!) - Date.parse(asset.date_add)).toBe(days * DAY)
      expect(asset.date_del!.slice(19)).toBe(asset.date_add.slice(19)) // same fraction, to the microsecond
    }

    test('the device rule wins over the production rule', async () => {
      expectDays(await create('video', hold, `${holdRoot}/show/a.mov`), 10)
    })

    test('without a device rule the production rule applies', async () => {
      expectDays(await create('video', hold, `${otherRoot}/elsewhere/b.mov`), 30)
    })

    test('a rule of duration 0 gives date_del = date_add', async () => {
      expectDays(await create('image', hold, `${holdRoot}/show/still.png`), 0)
    })

    test('no matching rule: date_del is null', async () => {
      expect((await create('video', other, `${otherRoot}/show/c.mov`)).date_del).toBeNull()
      // Rules are per asset type: hold-disk has only a video rule, Hold Show none for audio.
      expect((await create('audio', hold, `${holdRoot}/show/d.wav`)).date_del).toBeNull()
    })

    test('a date_del given in the body is kept', async () => {
      const asset = await create('video', hold, `${holdRoot}/show/e.mov`, { date_del: '2031-05-06' })
      expect(asset.date_del).toBe('2031-05-06T00:00:00.000000Z')
    })
  })
})

describe('restart', () => {
  test('records survive closing the database and opening the same data folder again', async () => {
    const first = testApp()
    const root = dirs.make()
    const device = await first.post('/api/devices/', {
      name: 'persist-disk',
      path: root,
      password: 'pw',
      write_permission_groups: ['a'],
    })
    const production = await first.post('/api/productions/', { name: 'Persist', storage_root: `${root}/persist` })
    const profile = await first.post('/api/transcodingprofiles/', {
      name: 'Persist HD',
      width: 1920,
      progressive: true,
    })
    const set = await first.post('/api/custommetadatasets/', { name: 'Persist set', description: 'd', content_type: 4 })
    const field = await first.post('/api/custommetadata/', {
      key: 'persist.key',
      value: 'Key',
      custom_metadata_set: set.json.id,
      validation_rule: '^x',
    })
    const holdRule = await first.post('/api/assetholddurations/', {
      asset_type: 'videoasset',
      context_type: 'device',
      context: 'persist-disk',
      duration: 3,
    })
    const asset = await first.post('/api/videoassets/', {
      name: 'clip',
      path_file: `${root}/persist/clip.mov`,
      production: production.json.id,
      meta_field_store: { 'persist.key': 'xyz' },
    })
    for (const r of [device, production, profile, set, field, holdRule, asset]) expect(r.status).toBeLessThan(300)

    const resources = [
      'devices',
      'productions',
      'transcodingprofiles',
      'custommetadatasets',
      'custommetadata',
      'assetholddurations',
      'videoassets',
      'contenttypes',
    ]
    const before: Record<string, unknown> = {}
    for (const resource of resources) before[resource] = (await first.get(`/api/${resource}/`)).json
    const assetBefore = (await first.get(`/api/videoassets/${asset.json.id}/`)).json
    first.close()

    const second = testApp(first.dataDir)
    try {
      for (const resource of resources)
        expect({ resource, list: (await second.get(`/api/${resource}/`)).json }).toEqual({
          resource,
          list: before[resource],
        })
      expect((await second.get(`/api/videoassets/${asset.json.id}/`)).json).toEqual(assetBefore)
      expect((await second.get(`/api/productions/${production.json.id}/`)).json).toEqual(production.json)
      expect((await second.get(`/api/devices/${device.json.id}/`)).json.password).toBe('********')
      // The first key still works, and uniqueness still holds.
      expect((await second.get('/api/devices/', { key: first.adminKey })).status).toBe(200)
      expectError(await second.post('/api/devices/', { name: 'persist-disk', path: dirs.make() }), 400, 'unique', {
        pointer: '/name',
      })
      const next = await second.post('/api/transcodingprofiles/', { name: 'After restart' })
      expect(next.json.id).toBeGreaterThan(profile.json.id)
    } finally {
      second.cleanup()
    }
  })
})

/** Bad input never reaches a 500 (service.md 4): a sweep of odd bodies over every create route. */
describe('no 500 on odd bodies', () => {
  const t = testApp()
  afterAll(() => t.cleanup())

  test('each create route answers odd JSON with a 2xx record or a 4xx envelope, never a 500', async () => {
    const routes = [
      'devices',
      'productions',
      'transcodingprofiles',
      'custommetadatasets',
      'custommetadata',
      'assetholddurations',
    ]
    const bodies: unknown[] = [
      {},
      { name: null },
      { name: ['x'] },
      { name: { a: 1 } },
      { name: 'x'.repeat(100_000) },
      { path: '/'.repeat(5000), name: 'slashes' },
      { name: '\u0000', path: '/\u0000' },
      { storage_root: 5, name: 5 },
      { content_type: '4', key: 'a', value: 'b', custom_metadata_set: '1' },
      { asset_type: null, context_type: [], context: {}, duration: 'NaN' },
      { duration: 1e308, asset_type: 'videoasset', context_type: 'device', context: 'x' },
    ]
    for (const resource of routes) {
      for (const body of bodies) {
        const r = await t.post(`/api/${resource}/`, body)
        if (r.status >= 500 || (r.status >= 300 && r.status < 400))
          throw new Error(`${resource} ${JSON.stringify(body).slice(0, 80)}: ${r.status} ${r.text.slice(0, 300)}`)
        if (r.status < 300) continue
        expect(r.json.errors.length).toBeGreaterThan(0)
        for (const e of r.json.errors) expect(e).toEqual(errorEntry(r.status, e.code, e.source))
      }
    }
  })
})
