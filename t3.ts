import { openDb } from './src/db/client.ts'
import { createApp } from './src/app.ts'
import { createUsers } from './src/modules/users/service.ts'
const db = openDb('/tmp/x2/t.db')
const key = createUsers(db).createKey('admin')
const app = createApp({ db })
const r = await app.handle(new Request('http://localhost/api/devices/?limit=1', { headers: { authorization: 'Token ' + key } }))
console.log(r.status, [...r.headers], r.headers.get('x-total-count'))
