import { afterAll, expect, test } from 'bun:test'
import { seedProduction, testApp } from './helpers/app.ts'

const t = testApp()
afterAll(() => t.cleanup())

test('a production on a device, and a video asset in it', async () => {
  const { root, device, production } = await seedProduction(t)
  expect(production.upload_device).toEqual(device)
  const asset = await t.post('/api/videoassets/', {
    name: 'clip',
    path_file: `${root}/Show/clip.mov`,
    production: production.id,
  })
  expect(asset.status).toBe(201)
  const list = await t.get('/api/videoassets/?limit=10')
  expect(list.headers.get('x-total-count')).toBe('1')
  expect(list.json).toEqual([
    {
      id: asset.json.id,
      name: 'clip',
      description: '',
      production: production.id,
      status_asset: 6,
      path_file: `${root}/Show/clip.mov`,
      device: device.id,
      is_archive: false,
      is_production: true,
      meta_field_store: {},
      status_approval: 0,
    },
  ])
})
