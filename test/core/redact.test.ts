import { describe, expect, it } from 'vitest';
import { redact } from '../../src/core/redact.js';
import { redact as reExported } from '../../src/stores/open-store.js';

describe('redact', () => {
  it('masks the password of every URL form that used to leak', () => {
    const cases: [string, string, string][] = [
      ['postgres://app:s3cret@db/app', 's3cret', 'postgres://app:***@db/app'],
      // A "/" ends the host for the URL parser: nothing between // and the last @ is kept.
      ['postgres://app:pa/ss@db/app', 'pa/ss', 'postgres://***@db/app'],
      // Parses as host "app", port 123 and a path holding the rest of the password.
      ['postgres://app:123/ss@db/app', '123/ss', 'postgres://***@db/app'],
      ['postgres://app:p@ss@db/app', 'p@ss', 'postgres://app:***@db/app'],
      ['postgres://app:pa#ss@db/app', 'pa#ss', 'postgres://***@db/app'],
      ['postgres://app:pa?ss@db/app', 'pa?ss', 'postgres://***@db/app'],
      ['postgres://:onlypassword@db/app', 'onlypassword', 'postgres://:***@db/app'],
      ['postgres://db/app?user=app&password=s3cret', 's3cret', 'postgres://db/app?user=app'],
      ['postgres://db/app?password=s3cret&user=app', 's3cret', 'postgres://db/app?user=app'],
      ['postgres://db/app?pass%77ord=s3cret', 's3cret', 'postgres://db/app'],
      ['mysql://app@db/app?sslkey=/k/s3cret.pem&sslpassword=s3cret', 's3cret', 'mysql://app@db/app'],
      ['postgres://app:s3cret@h1:5432,h2:5432/app', 's3cret', 'postgres://***@h1:5432,h2:5432/app'],
      // An @ in the query: the userinfo cannot be told apart, so everything up to it goes.
      ['postgres://db/app?user=a@b&password=s3cret', 's3cret', 'postgres://***@b'],
      ['postgress://app:pa/ss@db/app', 'pa/ss', 'postgress://***@db/app'],
      ['amqq://guest:s3cret@host', 's3cret', 'amqq://guest:***@host'],
      ['ftp://app:s3cret@db/app', 's3cret', 'ftp://app:***@db/app'],
      // No scheme: whatever precedes the @ may be the password.
      ['app:s3cret@db/app', 's3cret', '***@db/app'],
    ];
    for (const [url, secret, expected] of cases) {
      const shown = redact(url);
      expect({ url, shown }).toEqual({ url, shown: expected });
      expect(shown).not.toContain(secret);
    }
  });

  it('leaves URLs without credentials as they are', () => {
    for (const url of [
      'mysql://root@127.0.0.1:3306/test',
      'postgres://db:5432/app?application_name=x',
      'sqlite:/var/data/a@b.sqlite',
      'sqlite::memory:',
      'kafka',
      '',
    ])
      expect(redact(url)).toBe(url);
  });

  it('is what open-store exports', () => {
    expect(reExported).toBe(redact);
  });
});
