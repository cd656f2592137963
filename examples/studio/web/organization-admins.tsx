import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Said, useAction } from './admin-action.tsx';
import { client } from './studio-api.ts';

interface Admin {
  id: string;
  email: string;
  name: string;
}

/**
 * The admins of the organisation a project belongs to, for one of them: add one by address, remove one
 * (never the last). Shown on the Team page only to someone who administers the organisation.
 */
export function OrganizationAdmins({ projectKey, me }: { projectKey: string; me: string }) {
  const [organization, setOrganization] = useState<string | null>(null);
  const [admins, setAdmins] = useState<Admin[]>([]);
  const [email, setEmail] = useState('');

  const refresh = useCallback(async (name: string) => setAdmins(await client.organizationAdmins(name)), []);
  useEffect(() => {
    setOrganization(null);
    void client
      .organizations()
      .then(async (administered) => {
        const found = administered.find((candidate) => candidate.projects.includes(projectKey));
        if (!found) return;
        setOrganization(found.organization);
        await refresh(found.organization);
      })
      .catch(() => setOrganization(null));
  }, [projectKey, refresh]);
  // The list is fresh before the message says what changed. Someone who removed themself administers
  // it no longer: the panel goes.
  const { message, busy, run } = useAction(async () => {
    if (organization !== null) await refresh(organization).catch(() => setOrganization(null));
  });
  if (organization === null) return null;

  const add = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const added = await client.addOrganizationAdmin({ organization, email });
      setEmail('');
      return `${added.email} administers ${organization} now.`;
    });
  };
  return (
    <section className="panel admin-section" aria-label="Organisation admins">
      <h2>Admins of {organization}</h2>
      <p>They administer each of its projects, member or not.</p>
      <Said message={message} />
      <ul>
        {admins.map((admin) => (
          <li key={admin.id}>
            {admin.name} ({admin.email}){admin.id === me ? ' · you' : ''}{' '}
            <button
              type="button"
              disabled={busy}
              aria-label={`Remove ${admin.email} as an admin of ${organization}`}
              onClick={() =>
                void run(async () => {
                  await client.removeOrganizationAdmin({ organization, userId: admin.id });
                  return `${admin.email} no longer administers ${organization}.`;
                })
              }
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form className="admin-form" onSubmit={add}>
        <label>
          Address of an account
          <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Make admin of {organization}
        </button>
      </form>
    </section>
  );
}
