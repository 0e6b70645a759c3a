import { openDb } from './src/db/client.ts'
import { migrate } from './src/db/migrate.ts'
import { createApp } from './src/app.ts'
import { createUsers } from './src/modules/users/service.ts'
const db = openDb('/tmp/x2/t.db'); migrate(db)
const u = createUsers(db); try { u.add('admin', {superuser: true}) } catch {}
const key = u.createKey('admin')
const app = createApp({ db })
const H = { authorization: 'Token ' + key }
for (const [m, p, b, h] of [
  ['GET', '/api/health'], ['GET', '/api/devices/'], ['GET', '/api/devices'], ['POST', '/api/devices/', '{"name":"d1","path":"/tmp/dev1"}', {'content-type':'application/json'}],
  ['POST', '/api/devices/', 'name=d2&path=/tmp/dev2&is_archive=1&passthrough_profiles=[]', {'content-type':'application/x-www-form-urlencoded'}],
  ['POST', '/api/devices/', '{"name":"d1","path":"/tmp/dev1"}', {'content-type':'application/json'}],
  ['POST', '/api/devices/', '{}', {'content-type':'application/json'}],
  ['POST', '/api/devices/', '{"name":5, "path":"rel", "protocol":"ftp"}', {'content-type':'application/json'}],
  ['POST', '/api/devices/', '{bad', {'content-type':'application/json'}],
  ['POST', '/api/devices/', 'x', {'content-type':'text/plain'}],
  ['GET', '/api/devices/1'], ['GET', '/api/devices/99/'], ['GET', '/api/devices/abc'], ['DELETE', '/api/devices/1'], ['GET', '/api/nope'],
  ['GET', '/api/devices/?limit=1&offset=1'], ['GET', '/api/devices/?limit=x'], ['GET', '/api/devices/?path=/tmp/dev1'],
  ['GET', '/api/devices/', undefined, {accept: 'application/json; version=2'}],
  ['GET', '/api/devices/', undefined, {authorization: 'Bearer x'}],
  ['GET', '/api/docs'], ['GET', '/api/docs/json'],
] as any[]) {
  const r = await app.handle(new Request('http://localhost' + p, { method: m, body: b, headers: { ...H, ...h } }))
  const txt = await r.text()
  console.log(m, p, r.status, r.headers.get('x-total-count'), txt.slice(0, 300))
}
