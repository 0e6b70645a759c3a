// Devices (placeholder): the devices. To come: space, watch mode and its reason, online and offline
// counts, the last scan, rescan.
import { useGet } from '../data.ts'
import type { ViewProps } from '../main.tsx'
import { Status, View } from '../shell.tsx'

type Device = { id: number; name: string; display_name: string; path: string }

export default function Devices(_: ViewProps) {
  const devices = useGet<Device[]>('/api/devices/')
  return (
    <View title="Devices">
      <Status loading={devices.loading.value} error={devices.error.value} />
      <ul class="rows">
        {(devices.data.value ?? []).map((device) => (
          <li key={device.id}>
            <span>{device.display_name || device.name}</span>
            <span class="muted path">{device.path}</span>
          </li>
        ))}
      </ul>
    </View>
  )
}
